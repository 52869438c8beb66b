import BioAuthCore
import Foundation
import Logging
import SQLKit

/// Deletes rows that ``RetentionPolicy`` says have aged out: expired challenges (passkey ceremonies' too), idempotency
/// keys past their window, tokens that expired long enough ago, sessions that ended (or were abandoned) long enough ago
/// with the tokens they still have, console sessions that ended (signed out or timed out) long enough ago, old audit
/// events, rate-limit windows that have passed, and webhook events whose deliveries all ended (delivered, given up or
/// dropped) long enough ago, with their deliveries and attempts. Used by the server's background job and by
/// `bioauth admin purge`.
///
/// A purge deletes in batches of ``RetentionPolicy/batchSize`` rows (unless set, 50 on PostgreSQL and 10 on SQLite:
/// ``RetentionPolicy/defaultBatchSize(for:)``), each batch its own unit of work, so it never holds the database for
/// long, and rests after each full batch for ``RetentionPolicy/batchRest`` times as long as the batch took, so that a
/// large backlog leaves the database to the requests served meanwhile most of the time. Only one instance purges at a
/// time: it holds a lease (a row of `maintenance_leases`, claimed with one conditional upsert) that it renews between
/// batches once a minute and releases at the end; a lease left by an instance that died runs out after 10 minutes.
public struct Retention: Sendable {
    /// What is purged, in this order; a session's tokens, and a webhook delivery's attempts, also go with it.
    public enum Kind: String, Sendable, CaseIterable {
        case challenges
        case passkeyChallenges = "passkey_challenges"
        case accessTokens = "access_tokens"
        case refreshTokens = "refresh_tokens"
        case sessions
        case serviceTokens = "service_tokens"
        case operatorSessions = "operator_sessions"
        case idempotencyKeys = "idempotency_keys"
        case auditEvents = "audit_events"
        case rateLimits = "rate_limits"
        case webhookAttempts = "webhook_attempts"
        case webhookDeliveries = "webhook_deliveries"
        case webhookEvents = "webhook_events"
        case qrSignIns = "qr_sign_ins"
        case cibaPings = "ciba_pings"
        case approvals
        case bindingCodes = "binding_codes"
    }

    /// What a purge deleted, or a dry run would delete, by kind.
    public struct Report: Sendable, Equatable, CustomStringConvertible {
        /// Rows by kind; every kind is present.
        public var counts: [Kind: Int] = Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, 0) })
        /// All rows.
        public var total: Int { counts.values.reduce(0, +) }
        /// `challenges=3 access_tokens=0 …`, in purge order.
        public var description: String { Kind.allCases.map { "\($0.rawValue)=\(counts[$0] ?? 0)" }.joined(separator: " ") }

        /// Adds a rule's count: its own rows as `kind`, its dependents' as the kinds of their tables. Returns what it added.
        @discardableResult
        mutating func add(_ count: PurgeCount, as kind: Kind) -> [(Kind, Int)] {
            var added = [(kind, count.rows)]
            for (table, rows) in count.dependents {
                guard let dependent = Kind(rawValue: table) else {
                    preconditionFailure("a purge rule's dependent table \(table) is no kind of row the report counts")
                }
                added.append((dependent, rows))
            }
            for (kind, rows) in added { counts[kind, default: 0] += rows }
            return added
        }
    }

    let database: any DatabaseExecutor
    let clock: any WallClock
    let policy: RetentionPolicy
    /// Rows per batch on this database's engine (``RetentionPolicy/batchSize(on:)``).
    let batchSize: Int
    let rateLimitWindow: TimeInterval
    /// The console sessions' limits: a session is over once it has sat idle, or run, this long.
    let consoleIdleTimeout: TimeInterval
    let consoleSessionLifetime: TimeInterval
    let metrics: ServerMetrics?
    /// Waits between batches (``RetentionPolicy/batchRest``); a test's purger records the waits instead.
    let rest: @Sendable (Duration) async -> Void
    /// Who holds the lease while this value purges: a new random id per value.
    let holder = UUID().uuidString

    /// How long a lease lasts unless renewed: longer than any one batch.
    static let leaseDuration: TimeInterval = 600
    /// How long after its claim a running purge renews the lease: a tenth of it. Renewing before every batch cost a
    /// statement and a commit for each batch.
    static let leaseRenewal: TimeInterval = leaseDuration / 10
    /// The lease's name in `maintenance_leases`.
    static let leaseName = "retention"

    /// A purger of `database` under `configuration`'s ``ServerConfiguration/retention`` and rate-limit window.
    public init(
        database: any DatabaseExecutor,
        configuration: ServerConfiguration,
        clock: any WallClock = SystemClock(),
        metrics: ServerMetrics? = nil
    ) {
        self.init(database: database, configuration: configuration, clock: clock, metrics: metrics) { duration in
            try? await Task.sleep(for: duration)
        }
    }

    /// A purger that rests between batches with `rest`.
    init(
        database: any DatabaseExecutor,
        configuration: ServerConfiguration,
        clock: any WallClock,
        metrics: ServerMetrics?,
        rest: @escaping @Sendable (Duration) async -> Void
    ) {
        self.rest = rest
        self.database = database
        self.clock = clock
        self.policy = configuration.retention
        self.batchSize = configuration.retention.batchSize(on: database.dialect)
        self.rateLimitWindow = configuration.rateLimitWindow
        self.consoleIdleTimeout = configuration.consoleIdleTimeout
        self.consoleSessionLifetime = configuration.consoleSessionLifetime
        self.metrics = metrics
    }

    /// What ``purge(while:)`` would delete now; deletes nothing.
    public func dryRun() async throws -> Report {
        let rules = self.rules(now: clock.now)
        return try await database.transaction { db in
            var report = Report()
            for rule in rules {
                report.add(try await db.countPurgeable(rule.purge), as: rule.kind)
            }
            return report
        }
    }

    /// Deletes what has aged out, batch by batch, while `proceed` says so (the background job stops between batches when
    /// the server shuts down). Nil when another instance holds the lease: it is purging, and nothing was done here.
    public func purge(while proceed: @Sendable () -> Bool = { true }) async throws -> Report? {
        guard try await claimLease() else {
            metrics?.retentionRun(outcome: "skipped")
            return nil
        }
        var report = Report()
        var claimed = clock.now
        do {
            for rule in rules(now: clock.now) {
                while proceed() {
                    let started = ContinuousClock.now
                    // READ COMMITTED: each batch deletes only rows its rule's condition still selects as it deletes them
                    // (`deletePurgeable`). As SERIALIZABLE, each batch's scan took predicate locks on the rows it read; on a
                    // database with millions to purge, sign-ins' p99 during the purge was up to five times what it is with
                    // this (docs/PERFORMANCE.md, "Retention at scale").
                    let deleted = try await database.transaction(isolation: .readCommitted) {
                        [engine = database.dialect, size = batchSize] db in
                        try await db.deletePurgeable(rule.purge, limit: size, engine: engine)
                    }
                    for (kind, count) in report.add(deleted, as: rule.kind) { metrics?.retentionDeleted(kind.rawValue, count: count) }
                    guard deleted.rows == batchSize else { break }
                    await restAfter(batchTook: ContinuousClock.now - started, while: proceed)
                    // Renewed before the next batch once a tenth of the lease has gone since it was claimed, so that it
                    // always has most of its time left; lost only if this instance stalled past the lease (and so past
                    // the tenth: the claim that finds it taken stops the purge).
                    if clock.now.timeIntervalSince(claimed) >= Self.leaseRenewal {
                        guard try await claimLease() else { throw RetentionError.leaseLost }
                        claimed = clock.now
                    }
                }
            }
        } catch {
            try? await releaseLease()
            metrics?.retentionRun(outcome: "failed")
            throw error
        }
        try await releaseLease()
        metrics?.retentionRun(outcome: "completed", at: clock.now)
        return report
    }

    /// The longest single wait between batches: a shutdown is noticed within this.
    static let restSlice = Duration.milliseconds(250)

    /// Rests ``RetentionPolicy/batchRest`` times `batchTook`, in slices of at most ``restSlice``, while `proceed` says so.
    private func restAfter(batchTook: Duration, while proceed: @Sendable () -> Bool) async {
        var left = batchTook * policy.batchRest
        while left > .zero, proceed() {
            let slice = min(left, Self.restSlice)
            await rest(slice)
            left -= slice
        }
    }

    // MARK: Rules

    /// One kind of row and which of its rows are purgeable (its table's rule).
    struct Rule {
        let kind: Kind
        let purge: PurgeRule
    }

    /// The rules at `now`: each cutoff is fixed for the whole run.
    func rules(now: Date) -> [Rule] {
        let now = now.millisecondsSince1970
        let tokens = now - Int64(policy.tokens * 1000)
        let webhooks = now - Int64(policy.webhookEvents * 1000)
        return [
            Rule(kind: .challenges, purge: ChallengesTable.purgeExpired(now: now)),
            Rule(kind: .passkeyChallenges, purge: ChallengesTable.purgeExpiredPasskey(now: now)),
            // Expired tokens by their expiry; then ended and abandoned sessions, each with the tokens it still has.
            Rule(kind: .accessTokens, purge: SessionsTable.purgeExpiredAccessTokens(before: tokens)),
            Rule(kind: .refreshTokens, purge: SessionsTable.purgeExpiredRefreshTokens(before: tokens)),
            Rule(kind: .sessions, purge: SessionsTable.purgeEndedSessions(before: tokens, now: now)),
            Rule(kind: .sessions, purge: SessionsTable.purgeAbandonedSessions(before: tokens, now: now)),
            Rule(kind: .serviceTokens, purge: ServiceClientsTable.purgeTokens(before: tokens)),
            // A console session is over when its operator signed out, it sat idle, or it reached its absolute limit; it goes
            // once it has been over for the token retention.
            Rule(
                kind: .operatorSessions,
                purge: OperatorsTable.purgeSessions(
                    endedBefore: tokens,
                    idleSince: tokens - Int64(consoleIdleTimeout * 1000),
                    startedBefore: tokens - Int64(consoleSessionLifetime * 1000)
                )
            ),
            Rule(kind: .idempotencyKeys, purge: IdempotencyKeysTable.purge(before: now - Int64(policy.idempotencyKeys * 1000))),
            Rule(kind: .auditEvents, purge: AuditEventsTable.purge(before: now - Int64(policy.auditEvents * 1000))),
            // The longest window any bucket counts in: the requests' rate limits, or an operator's sign-in lock (15
            // minutes), which a purge must not lift early.
            Rule(
                kind: .rateLimits,
                purge: RateLimitsTable.purge(windowsBefore: now - Int64(max(rateLimitWindow, Operators.lockDuration) * 1000))
            ),
            // A webhook delivery goes with its attempts once it has ended long enough ago, and an event once it has no
            // delivery left; a pending delivery (still being tried) keeps its attempts and its event.
            Rule(kind: .webhookDeliveries, purge: WebhooksTable.purgeDeliveries(before: webhooks)),
            Rule(kind: .webhookEvents, purge: WebhooksTable.purgeEvents(before: webhooks)),
            // A web page's QR code is over 30 seconds after it was drawn; it goes with the tokens. An approval request is the
            // customer's record of what they approved: kept as long as the audit events.
            Rule(kind: .qrSignIns, purge: QRSignInsTable.purge(expiredBefore: tokens)),
            Rule(kind: .cibaPings, purge: CIBAPingsTable.purge(givenUpBefore: tokens)),
            Rule(kind: .approvals, purge: ApprovalsTable.purge(expiredBefore: now - Int64(policy.auditEvents * 1000))),
            // A binding code binds nothing after its 10 minutes; the audit events say what it bound.
            Rule(kind: .bindingCodes, purge: BindingCodesTable.purge(expiredBefore: tokens)),
        ]
    }

    // MARK: The lease

    /// Claims (or renews) the lease: one statement that succeeds when the lease is free, has run out, or is ours.
    private func claimLease() async throws -> Bool {
        let now = clock.now.millisecondsSince1970
        let until = now + Int64(Self.leaseDuration * 1000)
        let holder = self.holder
        return try await database.transaction { db in try await db.maintenanceLeases.claim(Self.leaseName, holder: holder, now: now, until: until) }
    }

    /// Gives the lease up, if it is still ours.
    private func releaseLease() async throws {
        let holder = self.holder
        try await database.transaction { db in try await db.maintenanceLeases.release(Self.leaseName, holder: holder) }
    }
}

/// A purge stopped because another instance took its lease (this one stalled for longer than the lease lasts).
enum RetentionError: Error, CustomStringConvertible {
    case leaseLost
    var description: String { "another instance took over the retention lease" }
}
