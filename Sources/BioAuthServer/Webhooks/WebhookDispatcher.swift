import AsyncHTTPClient
import BioAuthCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import SQLKit
import ServiceLifecycle

/// Delivers the outbox: every ``WebhookPolicy/pollInterval`` it marks pending payments and approval requests past their
/// time as expired (which writes `payment.expired` and `approval.expired`), and it keeps a pool of attempts going, each claiming a due delivery and POSTing it to
/// its endpoint, signed (``run()``).
///
/// Several instances may share a database. A delivery is claimed with one conditional update that also moves its next
/// attempt past a lease (``WebhookPolicy/leaseDuration``), so one instance at a time attempts it; if that instance dies
/// mid-delivery, the delivery is due again when the lease runs out and another instance (or the restarted one) sends
/// it again: at least once, never lost. No transaction is open while a receiver is called.
struct WebhookDispatcher: Service {
    let database: any DatabaseExecutor
    let clock: any WallClock
    /// Writes `payment.expired` with the expiry it records.
    let recorder: ChangeRecorder
    /// Opens the endpoints' sealed secrets.
    let secrets: SecretSealer
    let logger: Logger
    let metrics: ServerMetrics
    let policy: WebhookPolicy
    /// This process's name in leases and the attempt log.
    let instance: String
    /// Sends each attempt, after checking its destination again.
    let outbound: OutboundHTTP

    /// The dispatcher of the running server: its database, clock, webhook and outbound settings and PIN key's webhook
    /// sealer.
    init(service: BioAuthService) {
        self.database = service.database.background
        self.clock = service.clock
        self.recorder = service.recorder
        self.secrets = service.webhookSecrets
        self.logger = service.logger
        self.metrics = service.metrics
        self.policy = service.configuration.webhooks
        self.instance = "i_" + service.newSecret().prefix(12)
        self.outbound = OutboundHTTP(policy: service.configuration.outbound)
    }

    var now: Date { clock.now }

    /// Attempts in flight at once, at most.
    static let poolSize = 32

    /// Attempts in flight to one endpoint at once, at most, once its last attempt from this instance delivered: a quarter
    /// of the pool, so that a receiver that stops answering holds no more than that until its attempts time out. Until an
    /// endpoint has taken a delivery, and again after any attempt to it fails, one at a time.
    static let perEndpoint = 8

    /// What ends a wait of ``run()``: an attempt was sent (to be recorded), a CIBA ping ended, the attempts handed to the
    /// recorder were recorded, or the poll interval passed.
    private enum Wake: Sendable {
        case sent(Attempted)
        case pinged(key: String)
        case recorded
        case tick
    }

    /// Delivers until a graceful shutdown: a pool of at most ``poolSize`` attempts, each on its own, so a receiver that
    /// answers slowly (or never, until the timeout) holds its own attempts and nothing else. An endpoint that has taken a
    /// delivery has up to ``perEndpoint`` attempts in flight, so its deliveries keep up with the events a busy server
    /// writes; one that has not yet, or whose last attempt failed, has one: a dead receiver occupies one slot, however
    /// many of its deliveries are due, and its deliveries back off on the retry schedule.
    ///
    /// The database is asked for work in batches, so that its cost per delivery stays small when the server is busy:
    /// due deliveries are claimed at every poll interval, when an endpoint has nothing left in flight, and once half of
    /// what was in flight after the last claim has ended; the attempts that ended are recorded together, one unit of work
    /// at a time (those that end while one is written wait for the next). The attempts in flight finish, and are
    /// recorded, before it returns.
    func run() async throws {
        await withTaskGroup(of: Wake.self) { group in
            var busy: [String: Int] = [:]
            // Endpoints whose last attempt from here delivered.
            var delivering: Set<String> = []
            var unrecorded: [Attempted] = []
            var recording = false
            var ticking = false
            var claimNow = true
            var inFlightAfterClaim = 0
            var lastSweep: ContinuousClock.Instant?
            let interval = Duration.milliseconds(Int64(max(policy.pollInterval, 0.01) * 1000))
            func startRecording() {
                guard !recording, !unrecorded.isEmpty else { return }
                recording = true
                let batch = unrecorded
                unrecorded = []
                group.addTask {
                    await self.record(batch)
                    return .recorded
                }
            }
            /// Frees one of `key`'s slots; true when it has none left in flight.
            @discardableResult func release(_ key: String) -> Bool {
                busy[key, default: 1] -= 1
                guard busy[key] == 0 else { return false }
                busy[key] = nil
                return true
            }
            func handle(_ wake: Wake?) {
                switch wake {
                case .sent(let attempt):
                    let endpoint = attempt.claim.endpointID
                    // Nothing left in flight to this endpoint: whatever else of it is due goes out now.
                    if release(endpoint) { claimNow = true }
                    if attempt.failure == nil { delivering.insert(endpoint) } else { delivering.remove(endpoint) }
                    unrecorded.append(attempt)
                case .pinged(let key):
                    release(key)
                case .recorded: recording = false
                case .tick:
                    ticking = false
                    claimNow = true
                case nil: ticking = false
                }
                let inFlight = busy.values.reduce(0, +)
                if inFlight == 0 || inFlight * 2 <= inFlightAfterClaim { claimNow = true }
            }
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                if lastSweep.map({ ContinuousClock.now - $0 >= interval }) ?? true {
                    lastSweep = ContinuousClock.now
                    do { _ = try await expireOverduePayments() } catch {
                        logger.error("payment expiry sweep failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                    await measureBacklog()
                }
                startRecording()
                var free = Self.poolSize - busy.values.reduce(0, +)
                if claimNow && free > 0 {
                    claimNow = false
                    // CIBA pings share the pool: each holds a slot under its client's key while it is sent.
                    do {
                        for ping in try await claimDuePings(limit: free) {
                            let key = "ciba:" + ping.clientID
                            busy[key, default: 0] += 1
                            free -= 1
                            group.addTask {
                                await self.ping(ping)
                                return .pinged(key: key)
                            }
                        }
                    } catch {
                        logger.error("claiming ciba pings failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                    if free > 0 {
                        do {
                            let room: @Sendable (String) -> Int = { [busy, delivering] endpoint in
                                (delivering.contains(endpoint) ? Self.perEndpoint : 1) - busy[endpoint, default: 0]
                            }
                            let full = Set(busy.keys.filter { room($0) <= 0 })
                            for claim in try await claimDue(limit: free, room: room, excludingEndpoints: full) {
                                busy[claim.endpointID, default: 0] += 1
                                group.addTask { .sent(await self.send(claim)) }
                            }
                        } catch {
                            logger.error("claiming webhook deliveries failed", metadata: ["error": "\(String(reflecting: error))"])
                        }
                    }
                    inFlightAfterClaim = busy.values.reduce(0, +)
                }
                if !ticking {
                    ticking = true
                    group.addTask {
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
                        return .tick
                    }
                }
                handle(await group.next())
            }
            // The attempts in flight end on their own (each within the receiver timeout), and are recorded; the tick ends
            // with the shutdown.
            while let wake = await group.next() { handle(wake) }
            await record(unrecorded)
        }
    }

    /// One pass (what tests drive on their clock): the expiry sweep, then every due delivery, in batches of up to
    /// ``poolSize``, one per endpoint, attempted concurrently and each batch recorded together, as ``run()`` records, then
    /// every due CIBA ping. Returns how many payments expired and how many deliveries and pings were attempted.
    func runOnce() async throws -> (expired: Int, attempted: Int) {
        let expired = try await expireOverduePayments()
        await measureBacklog()
        var attempted = 0
        while !Task.isShuttingDownGracefully {
            let claims = try await claimDue(limit: Self.poolSize)
            guard !claims.isEmpty else { break }
            let sent = await withTaskGroup(of: Attempted.self) { group in
                for claim in claims { group.addTask { await self.send(claim) } }
                return await group.reduce(into: [Attempted]()) { $0.append($1) }
            }
            await record(sent)
            attempted += claims.count
        }
        attempted += try await pingDue()
        return (expired, attempted)
    }

    /// The most due deliveries the backlog gauge counts: past it, the outbox is far behind, and the gauge of the oldest's
    /// wait says how far.
    static let backlogCap = 10_000

    /// Sets the backlog gauges (``ServerMetrics/webhookBacklog(due:oldestWaiting:)``) from the outbox as it is now. A
    /// failure to read it is logged and leaves them as they were.
    private func measureBacklog() async {
        let at = now
        do {
            let backlog = try await database.transaction(isolation: .eachStatement) { db in
                try await db.webhooks.backlog(now: at.millisecondsSince1970, cap: Self.backlogCap)
            }
            let waiting = backlog.oldestDueAt.map { at.timeIntervalSince(Date(millisecondsSince1970: $0)) } ?? 0
            metrics.webhookBacklog(due: backlog.due, oldestWaiting: waiting)
        } catch {
            logger.error("reading the webhook backlog failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    // MARK: Expiry

    /// Marks pending payments past their expiry as expired, 100 at a time, each writing `payment.expired`.
    private func expireOverduePayments() async throws -> Int {
        var total = 0
        while true {
            let now = now.millisecondsSince1970
            let recorder = self.recorder
            let moved = try await database.transaction { db in
                let overdue = try await db.payments.overdue(now: now, limit: 100)
                var moved = 0
                for payment in overdue {
                    if try await recorder.expire(payment, on: db) { moved += 1 }
                }
                return (found: overdue.count, moved: moved)
            }
            total += moved.moved
            if moved.found < 100 { break }
        }
        metrics.paymentsExpired(total)
        try await expireOverdueApprovals()
        return total
    }

    /// Marks approval requests past their expiry as expired, 100 at a time, each writing `approval.expired`, so that the
    /// bank learns of one nobody answered without asking.
    private func expireOverdueApprovals() async throws {
        while true {
            let now = now.millisecondsSince1970
            let recorder = self.recorder
            let found = try await database.transaction { db in
                let overdue = try await db.approvals.overdue(now: now, limit: 100)
                for approval in overdue { try await recorder.expire(approval, on: db) }
                return overdue.count
            }
            if found < 100 { break }
        }
    }

    // MARK: Delivery

    /// A delivery this instance holds: what to send, where, signed with which secrets.
    struct Claim: Sendable {
        var eventID: String
        var eventType: String
        var endpointID: String
        var url: String
        var body: String
        var attempt: Int
        var giveUpAt: Int64
        /// The endpoint's live secrets, opened; empty when none opens (then nothing is sent: never unsigned).
        var secrets: [String]
    }

    /// Claims up to `limit` due deliveries of live endpoints, at most `room(endpoint)` of each (default: one) and none of
    /// `excluded` (endpoints with no room, left out of the query so that their backlog cannot hide others' deliveries):
    /// each moves its next attempt past the lease and counts the attempt, on the condition that it is still due (so of two
    /// instances, one gets it).
    func claimDue(
        limit: Int,
        room: @escaping @Sendable (String) -> Int = { _ in 1 },
        excludingEndpoints excluded: Set<String> = []
    ) async throws -> [Claim] {
        let now = now.millisecondsSince1970
        let leaseEnd = now + Int64(policy.leaseDuration * 1000)
        // READ COMMITTED (TransactionIsolation): each claim is a conditional update that re-reads its row, so of two
        // instances one gets it; SERIALIZABLE would only make instances claiming at once roll each other back.
        return try await database.transaction(isolation: .readCommitted) { db in
            var taken: [String: Int] = [:]
            let due = try await db.webhooks.dueDeliveries(now: now, limit: limit * 4, excludingEndpoints: Array(excluded)).filter { delivery in
                guard taken[delivery.endpointID, default: 0] < room(delivery.endpointID) else { return false }
                taken[delivery.endpointID, default: 0] += 1
                return true
            }
            var claims: [Claim] = []
            for (eventID, endpointID) in due.prefix(limit) {
                guard
                    let claimed = try await db.webhooks.claim(
                        eventID: eventID,
                        endpointID: endpointID,
                        instance: instance,
                        now: now,
                        leaseEnd: leaseEnd
                    )
                else { continue }
                guard let target = try await db.webhooks.target(eventID: eventID, endpointID: endpointID) else { continue }
                let secrets = try await db.webhooks.liveSecrets(endpoint: endpointID, now: now)
                let opened = secrets.compactMap { WebhookSecrets.open($0, endpointID: endpointID, with: self.secrets) }
                if opened.count < secrets.count {
                    // Sealed for another endpoint or damaged: the database was changed behind the server's back.
                    logger.error("a webhook secret does not open with the PIN key", metadata: ["endpoint": "\(endpointID)"])
                }
                claims.append(
                    Claim(
                        eventID: eventID,
                        eventType: target.type,
                        endpointID: endpointID,
                        url: target.url,
                        body: target.body,
                        attempt: claimed.attempt,
                        giveUpAt: claimed.giveUpAt,
                        secrets: opened
                    )
                )
            }
            return claims
        }
    }

    /// One attempt made and not yet recorded.
    struct Attempted: Sendable {
        var claim: Claim
        var started: Date
        var elapsed: Duration
        var statusCode: Int?
        var failure: AttemptFailure?
    }

    /// Sends one claimed delivery, signed: delivered on a 2xx answer, else failed (``record(_:)`` then retries it after the
    /// backoff, or gives it up past the retry window). Never throws: a failure is the attempt's outcome.
    func send(_ claim: Claim) async -> Attempted {
        let started = now
        let clockStart = ContinuousClock.now
        var statusCode: Int?
        var failure: AttemptFailure?
        do {
            guard !claim.secrets.isEmpty else { throw UnsignableDelivery() }
            var headers = HTTPHeaders()
            let body = Data(claim.body.utf8)
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "User-Agent", value: "BioAuth-Webhooks/1")
            headers.add(name: "BioAuth-Event-Id", value: claim.eventID)
            headers.add(name: "BioAuth-Event-Type", value: claim.eventType)
            headers.add(name: "BioAuth-Delivery-Attempt", value: String(claim.attempt))
            headers.add(
                name: WebhookSignature.headerName,
                value: WebhookSignature.header(body: body, timestamp: Int64(started.timeIntervalSince1970), secrets: claim.secrets)
            )
            let status = try await outbound.post(to: claim.url, headers: headers, body: body, timeout: policy.timeout)
            statusCode = status
            if !(200..<300).contains(status) { failure = AttemptFailure(status: status) }
        } catch {
            failure = AttemptFailure(error)
        }
        return Attempted(claim: claim, started: started, elapsed: ContinuousClock.now - clockStart, statusCode: statusCode, failure: failure)
    }

    /// Records `attempts` in one unit of work, each logged and its delivery moved on (delivered, retried after the backoff,
    /// or given up past the retry window). Never throws: a failure to record is logged, and the leases make those
    /// deliveries due again.
    func record(_ attempts: [Attempted]) async {
        guard !attempts.isEmpty else { return }
        let now = now
        let decided = attempts.map { attempt -> (Attempted, outcome: String, nextAttempt: Int64) in
            guard attempt.failure != nil else { return (attempt, "delivered", now.millisecondsSince1970) }
            let jitter = 0.8 + 0.4 * Double(UInt64.random(in: 0...1_000_000)) / 1_000_000
            let next = now.addingTimeInterval(policy.delay(afterFailures: attempt.claim.attempt, jitter: jitter)).millisecondsSince1970
            return (attempt, next > attempt.claim.giveUpAt ? "failed" : "retry", next)
        }
        let instance = instance
        do {
            // READ COMMITTED: each delivery moves on only while this instance holds its lease (a conditional update), and
            // the attempt log is appended to.
            try await database.transaction(isolation: .readCommitted) { db in
                for (attempt, outcome, nextAttempt) in decided {
                    try await db.webhooks.recordAttempt(
                        .init(
                            eventID: attempt.claim.eventID,
                            endpointID: attempt.claim.endpointID,
                            number: attempt.claim.attempt,
                            startedAt: attempt.started.millisecondsSince1970,
                            statusCode: attempt.statusCode,
                            latencyMilliseconds: attempt.elapsed.nanoseconds / 1_000_000,
                            error: attempt.failure?.shown,
                            instance: instance
                        ),
                        status: outcome == "retry" ? "pending" : outcome,
                        nextAttemptAt: nextAttempt,
                        deliveredAt: outcome == "delivered" ? now.millisecondsSince1970 : nil
                    )
                }
            }
        } catch {
            for attempt in attempts {
                logger.error(
                    "webhook attempt not recorded; the delivery is retried when its lease ends",
                    metadata: [
                        "event": "\(attempt.claim.eventID)", "endpoint": "\(attempt.claim.endpointID)", "error": "\(String(reflecting: error))",
                    ]
                )
            }
        }
        for (attempt, outcome, nextAttempt) in decided {
            let claim = attempt.claim
            metrics.webhookAttempt(outcome: outcome, error: attempt.failure?.kind, duration: attempt.elapsed)
            var metadata: Logger.Metadata = [
                "event": "\(claim.eventID)", "type": "\(claim.eventType)", "endpoint": "\(claim.endpointID)", "attempt": "\(claim.attempt)",
                "outcome": "\(outcome)", "latency_ms": "\(attempt.elapsed.nanoseconds / 1_000_000)",
            ]
            if let statusCode = attempt.statusCode { metadata["status"] = "\(statusCode)" }
            if let failure = attempt.failure { metadata["error"] = "\(failure.detail)" }
            if outcome == "delivered" {
                logger.info("webhook delivered", metadata: metadata)
            } else {
                if outcome == "retry" { metadata["next_attempt_at"] = "\(Date(millisecondsSince1970: nextAttempt))" }
                logger.warning(outcome == "failed" ? "webhook given up" : "webhook attempt failed", metadata: metadata)
            }
        }
    }
}

/// Why an attempt failed, in three grains: what the endpoint's owner sees (``shown``: the receiver's status, or "could
/// not connect" for anything before an answer, so that the delivery list cannot map which ports of a network answer),
/// the metric's label (``kind``), and the log's detail (``detail``: no URL, no secret).
struct AttemptFailure: Equatable {
    /// What `GET …/deliveries` shows: `not delivered` for whatever the receiver did or did not answer, or that no secret
    /// signs it. One word for a closed port, a timeout, a refused destination and any status but 2xx, so that a client
    /// holding `webhooks:write` cannot map what listens where through the list (docs/PROTOCOL.md, "Webhooks").
    var shown: String
    /// The label of `bioauth_webhook_attempts_total`'s `error`: `http_status`, `timeout`, `connection_refused`,
    /// `connection_closed`, `destination_refused`, `resolution_failed`, `unsigned` or `other`.
    var kind: String
    /// The server log's words.
    var detail: String

    /// What the endpoint's owner sees for every failed attempt.
    static let notDelivered = "not delivered"

    /// The receiver answered `status` (not 2xx).
    init(status: Int) {
        shown = Self.notDelivered
        kind = "http_status"
        detail = "HTTP \(status)"
    }

    init(_ error: any Error) {
        shown = Self.notDelivered
        switch error {
        case is UnsignableDelivery:
            shown = "not sent: no signing secret opens with the server's key"
            (kind, detail) = ("unsigned", shown)
        case let refusal as OutboundRefusal: (kind, detail) = ("destination_refused", "\(refusal)")
        case let failure as HostResolutionError: (kind, detail) = ("resolution_failed", failure.description)
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: (kind, detail) = ("timeout", "timeout")
            case .remoteConnectionClosed: (kind, detail) = ("connection_closed", "connection closed")
            default: (kind, detail) = ("other", "HTTP client: \(error)")
            }
        case is NIOConnectionError: (kind, detail) = ("connection_refused", "connection refused")
        case let error as IOError where error.errnoCode == ECONNREFUSED: (kind, detail) = ("connection_refused", "connection refused")
        case let error as IOError where error.errnoCode == ECONNRESET: (kind, detail) = ("connection_closed", "connection reset")
        case let error as IOError: (kind, detail) = ("other", "I/O error \(error.errnoCode)")
        default: (kind, detail) = ("other", String("\(error)".prefix(200)))
        }
    }

    /// What an attempt stored by an earlier version (its status, "could not connect", or the detail) shows now.
    static func shown(stored: String) -> String {
        stored.hasPrefix("not sent:") ? stored : notDelivered
    }

    /// Every ``kind``, for the metric's series at zero.
    static let kinds = [
        "http_status", "timeout", "connection_refused", "connection_closed", "destination_refused", "resolution_failed", "unsigned", "other",
    ]
}

/// A delivery whose endpoint has no secret this server can open: it is never sent unsigned.
struct UnsignableDelivery: Error {}
