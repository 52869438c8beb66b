import BioAuthCore
import Foundation
import Logging
import SQLKit

/// Deletes rows that ``RetentionPolicy`` says have aged out: expired challenges (passkey ceremonies' too), idempotency
/// keys past their window, tokens that expired (or whose session ended) long enough ago, sessions left with no token,
/// console sessions that ended (signed out or timed out) long enough ago, old audit events, rate-limit windows that have
/// passed, and webhook events whose deliveries all ended (delivered, given up or dropped) long enough ago, with their
/// deliveries and attempts. Used by the server's background job and by `bioauth admin purge`.
///
/// A purge deletes in batches of 1 000 rows, each batch its own unit of work, so it never holds the database for
/// long. Only one instance purges at a time: it holds a lease (a row of `maintenance_leases`, claimed with one
/// conditional upsert) that it renews before each batch and releases at the end; a lease left by an instance that died
/// runs out after 10 minutes.
public struct Retention: Sendable {
    /// What is purged, in this order.
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
    }

    /// What a purge deleted, or a dry run would delete, by kind.
    public struct Report: Sendable, Equatable, CustomStringConvertible {
        /// Rows by kind; every kind is present.
        public var counts: [Kind: Int] = Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, 0) })
        /// All rows.
        public var total: Int { counts.values.reduce(0, +) }
        /// `challenges=3 access_tokens=0 …`, in purge order.
        public var description: String { Kind.allCases.map { "\($0.rawValue)=\(counts[$0] ?? 0)" }.joined(separator: " ") }
    }

    let database: any DatabaseExecutor
    let clock: any WallClock
    let policy: RetentionPolicy
    let rateLimitWindow: TimeInterval
    let metrics: ServerMetrics?
    /// Who holds the lease while this value purges: a new random id per value.
    let holder = UUID().uuidString

    /// Rows deleted per unit of work.
    static let batchSize = 1000
    /// How long a lease lasts unless renewed: longer than any one batch.
    static let leaseDuration: TimeInterval = 600
    /// The lease's name in `maintenance_leases`.
    static let leaseName = "retention"

    /// A purger of `database` under `configuration`'s ``ServerConfiguration/retention`` and rate-limit window.
    public init(database: any DatabaseExecutor, configuration: ServerConfiguration, clock: any WallClock = SystemClock(), metrics: ServerMetrics? = nil) {
        self.database = database
        self.clock = clock
        self.policy = configuration.retention
        self.rateLimitWindow = configuration.rateLimitWindow
        self.metrics = metrics
    }

    /// What ``purge(while:)`` would delete now; deletes nothing.
    public func dryRun() async throws -> Report {
        let rules = self.rules(now: clock.now)
        return try await database.transaction { db in
            var report = Report()
            for rule in rules {
                let row = try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: rule.table) WHERE \(rule.condition)").first()
                report.counts[rule.kind] = try row?.decode(column: "n", as: Int.self) ?? 0
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
        do {
            for rule in rules(now: clock.now) {
                while proceed() {
                    let deleted = try await database.transaction { db in try await Self.deleteBatch(rule, on: db) }
                    report.counts[rule.kind, default: 0] += deleted
                    metrics?.retentionDeleted(rule.kind.rawValue, count: deleted)
                    guard deleted == Self.batchSize else { break }
                    // Renewed before each further batch; lost only if this instance stalled past the lease.
                    guard try await claimLease() else { throw RetentionError.leaseLost }
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

    // MARK: Rules

    /// One kind of row and the condition that makes it purgeable.
    struct Rule {
        let kind: Kind
        let table: String
        /// The key columns, comma-separated: `id`, or `account_id, idempotency_key`.
        let key: String
        let condition: SQLQueryString
    }

    /// The rules at `now`: each cutoff is fixed for the whole run.
    func rules(now: Date) -> [Rule] {
        let now = now.millisecondsSince1970
        let tokens = now - Int64(policy.tokens * 1000)
        // A user's token goes when it expired, or its session ended, long enough ago.
        let webhooks = now - Int64(policy.webhookEvents * 1000)
        let endedDeliveries: SQLQueryString = "status <> 'pending' AND created_at < \(bind: webhooks)"
        let agedToken: SQLQueryString =
            "expires_at < \(bind: tokens) OR session_id IN (SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at < \(bind: tokens))"
        return [
            Rule(kind: .challenges, table: "challenges", key: "id", condition: "expires_at < \(bind: now)"),
            Rule(kind: .passkeyChallenges, table: "passkey_challenges", key: "id", condition: "expires_at < \(bind: now)"),
            Rule(kind: .accessTokens, table: "access_tokens", key: "token_hash", condition: agedToken),
            Rule(kind: .refreshTokens, table: "refresh_tokens", key: "token_hash", condition: agedToken),
            // A session goes when the rules above have taken everything that refers to it: it ended longer ago than the
            // token retention (so its tokens went), or it never ended and every token it has expired that long ago (it
            // was abandoned); and it has no live challenge. Said without reference to those rules' deletions, so a dry
            // run counts what the purge deletes. The audit log keeps its id.
            Rule(
                kind: .sessions, table: "sessions", key: "id",
                condition: """
                    (ended_at < \(bind: tokens) OR (ended_at IS NULL AND created_at < \(bind: tokens)
                        AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.session_id = sessions.id AND a.expires_at >= \(bind: tokens))
                        AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id AND r.expires_at >= \(bind: tokens))))
                    AND NOT EXISTS (SELECT 1 FROM challenges c WHERE c.session_id = sessions.id AND c.expires_at >= \(bind: now))
                    """),
            Rule(kind: .serviceTokens, table: "service_tokens", key: "token_hash", condition: "expires_at < \(bind: tokens)"),
            // A console session is over when its operator signed out, it sat idle, or it reached its absolute limit; it goes
            // once it has been over for the token retention. Nothing refers to it; the audit log names the operator.
            Rule(
                kind: .operatorSessions, table: "operator_sessions", key: "token_hash",
                condition: """
                    ended_at < \(bind: tokens) OR last_seen_at < \(bind: tokens - Int64(ConsoleSessions.idleTimeout * 1000))
                        OR created_at < \(bind: tokens - Int64(ConsoleSessions.absoluteTimeout * 1000))
                    """),
            Rule(
                kind: .idempotencyKeys, table: "idempotency_keys", key: "account_id, idempotency_key",
                condition: "created_at < \(bind: now - Int64(policy.idempotencyKeys * 1000))"),
            Rule(kind: .auditEvents, table: "audit_events", key: "id", condition: "occurred_at < \(bind: now - Int64(policy.auditEvents * 1000))"),
            // A bucket whose window has passed counts from zero at its next hit anyway.
            Rule(kind: .rateLimits, table: "rate_limits", key: "bucket", condition: "window_start < \(bind: now - Int64(rateLimitWindow * 1000))"),
            // A webhook event goes with its deliveries and their attempts once every delivery has ended long enough ago; a
            // pending one (still being tried) keeps all of them.
            Rule(
                kind: .webhookAttempts, table: "webhook_attempts", key: "event_id, endpoint_id, attempt",
                condition: "(event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM webhook_deliveries WHERE \(endedDeliveries))"),
            Rule(kind: .webhookDeliveries, table: "webhook_deliveries", key: "event_id, endpoint_id", condition: endedDeliveries),
            Rule(
                kind: .webhookEvents, table: "webhook_events", key: "id",
                condition: "created_at < \(bind: webhooks) AND id NOT IN (SELECT event_id FROM webhook_deliveries)"),
        ]
    }

    /// Deletes up to ``batchSize`` rows `rule` selects, in one statement; returns how many went.
    private static func deleteBatch(_ rule: Rule, on db: any SQLDatabase) async throws -> Int {
        try await db.raw(
            """
            DELETE FROM \(unsafeRaw: rule.table) WHERE (\(unsafeRaw: rule.key)) IN
                (SELECT \(unsafeRaw: rule.key) FROM \(unsafeRaw: rule.table) WHERE (\(rule.condition)) LIMIT \(literal: batchSize))
            RETURNING 1 AS deleted
            """
        ).all().count
    }

    // MARK: The lease

    /// Claims (or renews) the lease: one statement that succeeds when the lease is free, has run out, or is ours.
    private func claimLease() async throws -> Bool {
        let now = clock.now.millisecondsSince1970
        let until = now + Int64(Self.leaseDuration * 1000)
        let holder = self.holder
        return try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO maintenance_leases (name, holder, expires_at) VALUES (\(bind: Self.leaseName), \(bind: holder), \(bind: until))
                ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                WHERE maintenance_leases.expires_at < \(bind: now) OR maintenance_leases.holder = excluded.holder
                RETURNING holder
                """
            ).first() != nil
        }
    }

    /// Gives the lease up, if it is still ours.
    private func releaseLease() async throws {
        let holder = self.holder
        try await database.transaction { db in
            try await db.raw("UPDATE maintenance_leases SET expires_at = 0 WHERE name = \(bind: Self.leaseName) AND holder = \(bind: holder)").run()
        }
    }
}

/// A purge stopped because another instance took its lease (this one stalled for longer than the lease lasts).
enum RetentionError: Error, CustomStringConvertible {
    case leaseLost
    var description: String { "another instance took over the retention lease" }
}
