import AsyncHTTPClient
import BioAuthCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import SQLKit
import ServiceLifecycle

/// Delivers the outbox: every ``WebhookPolicy/pollInterval`` it marks pending payments past their time as expired
/// (which writes `payment.expired`), and it keeps a pool of attempts going, each claiming a due delivery and POSTing it to
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
    let http: HTTPClient

    /// The dispatcher of the running server: its database, clock, webhook settings and PIN key's webhook sealer.
    init(service: BioAuthService) {
        self.database = service.database
        self.clock = service.clock
        self.recorder = service.recorder
        self.secrets = service.webhookSecrets
        self.logger = service.logger
        self.metrics = service.metrics
        self.policy = service.configuration.webhooks
        self.instance = "i_" + service.newSecret().prefix(12)
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        // A receiver that refuses connections fails the attempt at once (and is retried on the webhook schedule), instead
        // of the pool backing off on its own schedule and failing later attempts after the receiver is back.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(
            connect: .milliseconds(Int64(policy.timeout * 1000)),
            read: .milliseconds(Int64(policy.timeout * 1000))
        )
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    private var now: Date { clock.now }

    /// Attempts in flight at once, at most.
    static let poolSize = 16

    /// What ends a wait of ``run()``: an attempt to an endpoint ended, or the poll interval passed.
    private enum Wake: Sendable {
        case attemptEnded(endpoint: String)
        case tick
    }

    /// Delivers until a graceful shutdown: a pool of at most ``poolSize`` attempts, each on its own, so a receiver that
    /// answers slowly (or never, until the timeout) holds its own attempt and nothing else. A free slot is filled as soon
    /// as an attempt ends, and at every poll interval, which also runs the expiry sweep. An endpoint has at most one
    /// attempt in flight: a dead receiver occupies one slot, however many of its deliveries are due, and its deliveries
    /// back off on the retry schedule. The attempts in flight finish before it returns.
    func run() async throws {
        await withTaskGroup(of: Wake.self) { group in
            var busy: [String: Int] = [:]
            var ticking = false
            var lastSweep: ContinuousClock.Instant?
            let interval = Duration.milliseconds(Int64(max(policy.pollInterval, 0.01) * 1000))
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                if lastSweep.map({ ContinuousClock.now - $0 >= interval }) ?? true {
                    lastSweep = ContinuousClock.now
                    do { _ = try await expireOverduePayments() } catch {
                        logger.error("payment expiry sweep failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                let free = Self.poolSize - busy.values.reduce(0, +)
                if free > 0 {
                    do {
                        for claim in try await claimDue(limit: free, excludingEndpoints: Set(busy.keys)) {
                            busy[claim.endpointID, default: 0] += 1
                            group.addTask {
                                await self.attempt(claim)
                                return .attemptEnded(endpoint: claim.endpointID)
                            }
                        }
                    } catch {
                        logger.error("claiming webhook deliveries failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                if !ticking {
                    ticking = true
                    group.addTask {
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
                        return .tick
                    }
                }
                switch await group.next() {
                case .attemptEnded(let endpoint):
                    busy[endpoint, default: 1] -= 1
                    if busy[endpoint] == 0 { busy[endpoint] = nil }
                case .tick: ticking = false
                case nil: ticking = false
                }
            }
            // The attempts in flight end on their own (each within the receiver timeout); the tick ends with the shutdown.
            await group.waitForAll()
        }
        await shutdown()
    }

    /// Closes the HTTP client (``run()`` does this when it ends).
    func shutdown() async {
        try? await http.shutdown()
    }

    /// One pass (what tests drive on their clock): the expiry sweep, then every due delivery, in batches of up to 16, one per
    /// endpoint, attempted concurrently. Returns how many payments expired and how many deliveries were attempted.
    func runOnce() async throws -> (expired: Int, attempted: Int) {
        let expired = try await expireOverduePayments()
        var attempted = 0
        while !Task.isShuttingDownGracefully {
            let claims = try await claimDue(limit: 16)
            guard !claims.isEmpty else { break }
            await withTaskGroup(of: Void.self) { group in
                for claim in claims { group.addTask { await self.attempt(claim) } }
            }
            attempted += claims.count
        }
        return (expired, attempted)
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
        return total
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

    /// Claims up to `limit` due deliveries of live endpoints, at most one per endpoint and none of `excluded` (endpoints
    /// with an attempt in flight): each moves its next attempt past the lease and counts the attempt, on the condition
    /// that it is still due (so of two instances, one gets it).
    func claimDue(limit: Int, excludingEndpoints excluded: Set<String> = []) async throws -> [Claim] {
        let now = now.millisecondsSince1970
        let leaseEnd = now + Int64(policy.leaseDuration * 1000)
        return try await database.transaction { db in
            var taken = excluded
            let due = try await db.webhooks.dueDeliveries(now: now, limit: limit * 4, excludingEndpoints: Array(excluded)).filter { delivery in
                taken.insert(delivery.endpointID).inserted
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

    /// Sends one claimed delivery and records the attempt: delivered on a 2xx answer; otherwise retried after the
    /// backoff, or given up past the retry window. Never throws: a failure to record is logged, and the lease makes the
    /// delivery due again.
    func attempt(_ claim: Claim) async {
        let started = now
        let clockStart = ContinuousClock.now
        var statusCode: Int?
        var failure: String?
        do {
            guard !claim.secrets.isEmpty else { throw UnsignableDelivery() }
            var request = HTTPClientRequest(url: claim.url)
            request.method = .POST
            let body = Data(claim.body.utf8)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "BioAuth-Webhooks/1")
            request.headers.add(name: "BioAuth-Event-Id", value: claim.eventID)
            request.headers.add(name: "BioAuth-Event-Type", value: claim.eventType)
            request.headers.add(name: "BioAuth-Delivery-Attempt", value: String(claim.attempt))
            request.headers.add(
                name: WebhookSignature.headerName,
                value: WebhookSignature.header(body: body, timestamp: Int64(started.timeIntervalSince1970), secrets: claim.secrets)
            )
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await http.execute(request, timeout: .milliseconds(Int64(policy.timeout * 1000)))
            statusCode = Int(response.status.code)
            // The answer's body is read and dropped, at most 64 KiB of it; a receiver owes us nothing but its status.
            var read = 0
            for try await chunk in response.body {
                read += chunk.readableBytes
                if read > 65_536 { break }
            }
            if !(200..<300).contains(response.status.code) { failure = "HTTP \(response.status.code)" }
        } catch {
            failure = Self.describe(error)
        }
        let elapsed = ContinuousClock.now - clockStart
        await record(claim, started: started, elapsed: elapsed, statusCode: statusCode, failure: failure)
    }

    private func record(_ claim: Claim, started: Date, elapsed: Duration, statusCode: Int?, failure: String?) async {
        let now = now
        let latency = elapsed.nanoseconds / 1_000_000
        let outcome: String
        let nextAttempt: Int64
        if failure == nil {
            outcome = "delivered"
            nextAttempt = now.millisecondsSince1970
        } else {
            let jitter = 0.8 + 0.4 * Double(UInt64.random(in: 0...1_000_000)) / 1_000_000
            nextAttempt = now.addingTimeInterval(policy.delay(afterFailures: claim.attempt, jitter: jitter)).millisecondsSince1970
            outcome = nextAttempt > claim.giveUpAt ? "failed" : "retry"
        }
        do {
            try await database.transaction { db in
                try await db.webhooks.recordAttempt(
                    .init(
                        eventID: claim.eventID,
                        endpointID: claim.endpointID,
                        number: claim.attempt,
                        startedAt: started.millisecondsSince1970,
                        statusCode: statusCode,
                        latencyMilliseconds: latency,
                        error: failure,
                        instance: instance
                    ),
                    status: outcome == "retry" ? "pending" : outcome,
                    nextAttemptAt: nextAttempt,
                    deliveredAt: outcome == "delivered" ? now.millisecondsSince1970 : nil
                )
            }
        } catch {
            logger.error(
                "webhook attempt not recorded; the delivery is retried when its lease ends",
                metadata: ["event": "\(claim.eventID)", "endpoint": "\(claim.endpointID)", "error": "\(String(reflecting: error))"]
            )
        }
        metrics.webhookAttempt(outcome: outcome, duration: elapsed)
        var metadata: Logger.Metadata = [
            "event": "\(claim.eventID)", "type": "\(claim.eventType)", "endpoint": "\(claim.endpointID)", "attempt": "\(claim.attempt)",
            "outcome": "\(outcome)", "latency_ms": "\(latency)",
        ]
        if let statusCode { metadata["status"] = "\(statusCode)" }
        if let failure { metadata["error"] = "\(failure)" }
        if outcome == "delivered" {
            logger.info("webhook delivered", metadata: metadata)
        } else {
            if outcome == "retry" { metadata["next_attempt_at"] = "\(Date(millisecondsSince1970: nextAttempt))" }
            logger.warning(outcome == "failed" ? "webhook given up" : "webhook attempt failed", metadata: metadata)
        }
    }

    /// A short, stable description of a failed attempt for the log and the delivery list (no URL, no secret).
    static func describe(_ error: any Error) -> String {
        if error is UnsignableDelivery { return "no secret opens with the PIN key: not sent" }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timeout"
            case .remoteConnectionClosed: return "connection closed"
            default: return "HTTP client: \(error)"
            }
        }
        if error is NIOConnectionError { return "connection refused" }
        if let error = error as? IOError {
            return error.errnoCode == ECONNREFUSED
                ? "connection refused" : error.errnoCode == ECONNRESET ? "connection reset" : "I/O error \(error.errnoCode)"
        }
        let text = "\(error)"
        return String(text.prefix(200))
    }
}

/// A delivery whose endpoint has no secret this server can open: it is never sent unsigned.
struct UnsignableDelivery: Error {}
