import Foundation
import SQLKit

/// Which rows of one table retention may delete: the table, its key columns and the condition that makes a row
/// purgeable. Each table family states its own (`SessionsTable.purgeAccessTokens(…)`, …); `Retention` decides the
/// cutoffs and the order, and runs them through ``SQLDatabase/countPurgeable(_:)`` and
/// ``SQLDatabase/deletePurgeable(_:limit:engine:)``.
struct PurgeRule: Sendable {
    let table: String
    /// The key columns, comma-separated: `id`, or `account_id, idempotency_key`.
    let key: String
    let condition: SQLQueryString
}

extension SQLDatabase {
    /// How many rows `rule` selects now.
    func countPurgeable(_ rule: PurgeRule) async throws -> Int {
        try await raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: rule.table) WHERE \(rule.condition)").first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Deletes up to `limit` rows `rule` selects, in one statement; returns how many went.
    ///
    /// On PostgreSQL the statement answers with the count alone (a data-modifying `WITH`), not a row for each row it
    /// deleted: a day's purge is millions of rows, and receiving and decoding a row for each was half of the purging
    /// process's CPU (docs/PERFORMANCE.md, "Retention at scale"). SQLite has no data-modifying `WITH`, and its answer
    /// rows cross no network.
    ///
    /// The condition is stated twice: once to pick the batch, and once on each row as it is deleted. On PostgreSQL a
    /// batch runs at `READ COMMITTED` (``TransactionIsolation/readCommitted``), and a row that a unit committing first
    /// changed while the batch waited for its lock is checked again as it now is: a rate-limit window a hit restarted, a
    /// console session seen again, is kept. Picked by the first condition alone, it would go.
    func deletePurgeable(_ rule: PurgeRule, limit: Int, engine: DatabaseDialect) async throws -> Int {
        let delete: SQLQueryString = """
            DELETE FROM \(unsafeRaw: rule.table) WHERE (\(unsafeRaw: rule.key)) IN
                (SELECT \(unsafeRaw: rule.key) FROM \(unsafeRaw: rule.table) WHERE (\(rule.condition)) LIMIT \(literal: limit))
                AND (\(rule.condition))
            RETURNING 1 AS deleted
            """
        switch engine {
        case .postgres:
            return try await raw("WITH deleted AS (\(delete)) SELECT COUNT(*) AS n FROM deleted").first()?.decode(column: "n", as: Int.self) ?? 0
        case .sqlite:
            return try await raw(delete).all().count
        }
    }
}

extension ChallengesTable {
    /// Device-key challenges that expired before `now`.
    static func purgeExpired(now: Int64) -> PurgeRule { PurgeRule(table: "challenges", key: "id", condition: "expires_at < \(bind: now)") }

    /// Passkey ceremony challenges that expired before `now`.
    static func purgeExpiredPasskey(now: Int64) -> PurgeRule {
        PurgeRule(table: "passkey_challenges", key: "id", condition: "expires_at < \(bind: now)")
    }
}

extension SessionsTable {
    /// A user's token of `table` goes when it expired, or its session ended, before `cutoff`. The session is looked up by
    /// its key for each token (`EXISTS`): PostgreSQL ran `session_id IN (SELECT id FROM sessions …)` as a list of every
    /// aged session, scanned for each token once it no longer fitted in memory, which with two million ended sessions did
    /// not finish in twelve minutes (docs/PERFORMANCE.md).
    private static func purgeAgedTokens(of table: String, before cutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: table,
            key: "token_hash",
            condition: """
                expires_at < \(bind: cutoff) OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = \(unsafeRaw: table).session_id \
                AND s.ended_at IS NOT NULL AND s.ended_at < \(bind: cutoff))
                """
        )
    }

    /// Access tokens that expired, or whose session ended, before `cutoff`.
    static func purgeAccessTokens(before cutoff: Int64) -> PurgeRule { purgeAgedTokens(of: "access_tokens", before: cutoff) }

    /// Refresh tokens that expired, or whose session ended, before `cutoff`.
    static func purgeRefreshTokens(before cutoff: Int64) -> PurgeRule { purgeAgedTokens(of: "refresh_tokens", before: cutoff) }

    /// A session goes when the token rules have taken everything that refers to it: it ended before `cutoff` (so its tokens
    /// went), or it never ended and every token it has expired before `cutoff` (it was abandoned); and it has no challenge
    /// live at `now`. Said without reference to those rules' deletions, so a dry run counts what the purge deletes. The
    /// audit log keeps its id.
    static func purgeSessions(before cutoff: Int64, now: Int64) -> PurgeRule {
        PurgeRule(
            table: "sessions",
            key: "id",
            condition: """
                (ended_at < \(bind: cutoff) OR (ended_at IS NULL AND created_at < \(bind: cutoff)
                    AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.session_id = sessions.id AND a.expires_at >= \(bind: cutoff))
                    AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id AND r.expires_at >= \(bind: cutoff))))
                AND NOT EXISTS (SELECT 1 FROM challenges c WHERE c.session_id = sessions.id AND c.expires_at >= \(bind: now))
                """
        )
    }
}

extension ServiceClientsTable {
    /// Service tokens that expired before `cutoff`.
    static func purgeTokens(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "service_tokens", key: "token_hash", condition: "expires_at < \(bind: cutoff)")
    }
}

extension OperatorsTable {
    /// Console sessions over before `cutoff`: signed out, idle since `idleCutoff`, or started before `absoluteCutoff`.
    /// Nothing refers to them; the audit log names the operator.
    static func purgeSessions(endedBefore cutoff: Int64, idleSince idleCutoff: Int64, startedBefore absoluteCutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: "operator_sessions",
            key: "token_hash",
            condition: "ended_at < \(bind: cutoff) OR last_seen_at < \(bind: idleCutoff) OR created_at < \(bind: absoluteCutoff)"
        )
    }
}

extension IdempotencyKeysTable {
    /// Keys first used before `cutoff`.
    static func purge(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "idempotency_keys", key: "account_id, idempotency_key", condition: "created_at < \(bind: cutoff)")
    }
}

extension AuditEventsTable {
    /// Events that occurred before `cutoff`.
    static func purge(before cutoff: Int64) -> PurgeRule { PurgeRule(table: "audit_events", key: "id", condition: "occurred_at < \(bind: cutoff)") }
}

extension RateLimitsTable {
    /// Buckets whose window started before `cutoff`: such a bucket counts from zero at its next hit anyway.
    static func purge(windowsBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "rate_limits", key: "bucket", condition: "window_start < \(bind: cutoff)")
    }
}

extension WebhooksTable {
    /// Deliveries that ended (delivered, given up or dropped) and were made before `cutoff`.
    private static func endedDeliveries(_ cutoff: Int64) -> SQLQueryString { "status <> 'pending' AND created_at < \(bind: cutoff)" }

    /// The attempts of deliveries that ended before `cutoff`; a pending delivery keeps all of them.
    static func purgeAttempts(before cutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: "webhook_attempts",
            key: "event_id, endpoint_id, attempt",
            condition: "(event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM webhook_deliveries WHERE \(endedDeliveries(cutoff)))"
        )
    }

    /// Deliveries that ended before `cutoff`.
    static func purgeDeliveries(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "webhook_deliveries", key: "event_id, endpoint_id", condition: endedDeliveries(cutoff))
    }

    /// Events made before `cutoff` that no delivery refers to any more.
    static func purgeEvents(before cutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: "webhook_events",
            key: "id",
            condition: "created_at < \(bind: cutoff) AND id NOT IN (SELECT event_id FROM webhook_deliveries)"
        )
    }
}

extension QRSignInsTable {
    /// The web page's QR codes that expired before `cutoff` (scanned or not: the approval request keeps what was approved).
    static func purge(expiredBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "qr_sign_ins", key: "id", condition: "expires_at < \(bind: cutoff)")
    }
}

extension ApprovalsTable {
    /// Approval requests whose time to be answered ended before `cutoff`, whatever their outcome.
    static func purge(expiredBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "approvals", key: "id", condition: "expires_at < \(bind: cutoff)")
    }
}

extension CIBAPingsTable {
    /// CIBA pings whose time to be tried (delivered or not) ended before `cutoff`.
    static func purge(givenUpBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "ciba_pings", key: "approval_id", condition: "give_up_at < \(bind: cutoff)")
    }
}
