import Foundation
import SQLKit

/// Which rows of one table retention may delete: the table, its key columns and the condition that makes a row
/// purgeable, and the rows of other tables that refer to them and go with them. Each table family states its own
/// (`SessionsTable.purgeEndedSessions(…)`, …); `Retention` decides the cutoffs and the order, and runs them through
/// ``SQLDatabase/countPurgeable(_:)`` and ``SQLDatabase/deletePurgeable(_:limit:engine:)``.
///
/// A condition must let the database find a batch through an index, without reading rows it then leaves: a batch that
/// reads the table from its start until it has found its rows reads, on a table where most rows stay, more with every
/// batch, and a day's backlog then costs the square of its size (`QueryPlanTests` checks every rule's plan).
struct PurgeRule: Sendable {
    let table: String
    /// The key columns, comma-separated: `id`, or `account_id, idempotency_key`. Text columns when there are
    /// ``dependents``.
    let key: String
    let condition: SQLQueryString
    /// Rows of other tables that refer to a row this rule deletes, deleted with it in the same batch, before it.
    var dependents: [Dependent] = []
    /// The rows a dry run counts, when an earlier rule of the same run deletes rows that, until then, keep some of this
    /// rule's (`nil`: ``condition``). The purge deletes by ``condition``, which by then holds for them; a dry run deletes
    /// nothing, so it must state the earlier rule's work itself.
    var counted: SQLQueryString? = nil

    /// The rows of `table` whose `columns` (as many, in the same order, as the rule's key) name a row of the rule's table.
    struct Dependent: Sendable {
        let table: String
        let columns: String
        /// Which of them a dry run counts, when an earlier rule deletes some first (`nil`: all). A purge's batch deletes
        /// every one that is left, and by then the earlier rules have run.
        var leftByEarlierRules: SQLQueryString? = nil
    }
}

/// What a batch deleted, or a dry run counts: the rule's own rows, and its dependents' by table.
struct PurgeCount: Sendable, Equatable {
    var rows: Int
    var dependents: [String: Int] = [:]
}

extension SQLDatabase {
    /// How many rows `rule` selects now, and how many of its dependents' rows would go with them.
    func countPurgeable(_ rule: PurgeRule) async throws -> PurgeCount {
        let condition = rule.counted ?? rule.condition
        let rows =
            try await raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: rule.table) WHERE \(condition)").first()?.decode(column: "n", as: Int.self)
            ?? 0
        var count = PurgeCount(rows: rows)
        for dependent in rule.dependents {
            var counting: SQLQueryString = """
                SELECT COUNT(*) AS n FROM \(unsafeRaw: dependent.table) WHERE (\(unsafeRaw: dependent.columns)) IN \
                (SELECT \(unsafeRaw: rule.key) FROM \(unsafeRaw: rule.table) WHERE \(condition))
                """
            if let left = dependent.leftByEarlierRules { counting += " AND (\(left))" }
            count.dependents[dependent.table] = try await raw(counting).first()?.decode(column: "n", as: Int.self) ?? 0
        }
        return count
    }

    /// Deletes up to `limit` rows `rule` selects, with their dependents; returns how many went.
    ///
    /// On PostgreSQL, one statement (``PurgeRule/deleteStatement(limit:engine:)``). On SQLite, a rule without dependents
    /// is one statement too; one with dependents picks the batch's keys (``PurgeRule/pickStatement(limit:)``), then
    /// deletes each dependent's rows and the batch by those keys, in the caller's unit of work (SQLite runs one at a time).
    func deletePurgeable(_ rule: PurgeRule, limit: Int, engine: DatabaseDialect) async throws -> PurgeCount {
        switch engine {
        case .postgres:
            guard let row = try await raw(rule.deleteStatement(limit: limit, engine: engine)).first() else { return PurgeCount(rows: 0) }
            var count = PurgeCount(rows: try row.decode(column: "n", as: Int.self))
            for (index, dependent) in rule.dependents.enumerated() {
                count.dependents[dependent.table] = try row.decode(column: "d\(index)", as: Int.self)
            }
            return count
        case .sqlite where rule.dependents.isEmpty:
            return PurgeCount(rows: try await raw(rule.deleteStatement(limit: limit, engine: engine)).all().count)
        case .sqlite:
            let columns = rule.keyColumns
            let keys = try await raw(rule.pickStatement(limit: limit)).all().map { row in
                try columns.map { try row.decode(column: $0, as: String.self) }
            }
            guard !keys.isEmpty else { return PurgeCount(rows: 0) }
            var count = PurgeCount(rows: 0)
            for (table, delete) in rule.deleteStatements(keys: keys) {
                let deleted = try await raw(delete).all().count
                if table == rule.table { count.rows = deleted } else { count.dependents[table] = deleted }
            }
            return count
        }
    }
}

extension PurgeRule {
    /// The statement that deletes up to `limit` of the rows this rule selects (with their dependents, on PostgreSQL): on
    /// PostgreSQL it answers one row, the count `n` and each dependent's, `d0`, `d1`, … in order; on SQLite, for a rule
    /// without dependents, a row for each row deleted.
    ///
    /// On PostgreSQL the counts alone come back (a data-modifying `WITH`), not a row for each row deleted: a day's purge is
    /// millions of rows, and receiving and decoding a row for each was half of the purging process's CPU
    /// (docs/PERFORMANCE.md, "Retention at scale"). SQLite has no data-modifying `WITH`, and its answer rows cross no
    /// network.
    ///
    /// A row changed by a unit committing first, while the batch waited for its lock, is checked again as it now is (a
    /// batch runs at `READ COMMITTED` on PostgreSQL, ``TransactionIsolation/readCommitted``): a rate-limit window a hit
    /// restarted, a console session seen again, a session a sign-in ended, is kept. Without dependents the condition is
    /// stated twice for that, once to pick the batch and once on each row as it is deleted; with them the batch's rows are
    /// locked as they are picked (`FOR UPDATE`, which checks them again), before anything that refers to them is deleted.
    func deleteStatement(limit: Int, engine: DatabaseDialect) -> SQLQueryString {
        if !dependents.isEmpty {
            precondition(engine == .postgres, "on SQLite a batch with dependents is several statements (deletePurgeable)")
            var statement: SQLQueryString = "WITH picked AS (\(pickStatement(limit: limit)) FOR UPDATE)"
            var counts: SQLQueryString = "SELECT (SELECT COUNT(*) FROM deleted) AS n"
            for (index, dependent) in dependents.enumerated() {
                statement += """
                    , d\(unsafeRaw: String(index)) AS (DELETE FROM \(unsafeRaw: dependent.table) \
                    WHERE (\(unsafeRaw: dependent.columns)) IN (SELECT \(unsafeRaw: key) FROM picked) RETURNING 1)
                    """
                counts += ", (SELECT COUNT(*) FROM d\(unsafeRaw: String(index))) AS d\(unsafeRaw: String(index))"
            }
            return statement
                + ", deleted AS (DELETE FROM \(unsafeRaw: table) WHERE (\(unsafeRaw: key)) IN (SELECT \(unsafeRaw: key) FROM picked) RETURNING 1) "
                + counts
        }
        let delete: SQLQueryString = """
            DELETE FROM \(unsafeRaw: table) WHERE (\(unsafeRaw: key)) IN
                (SELECT \(unsafeRaw: key) FROM \(unsafeRaw: table) WHERE (\(condition)) LIMIT \(literal: limit))
                AND (\(condition))
            RETURNING 1 AS deleted
            """
        switch engine {
        case .postgres: return "WITH deleted AS (\(delete)) SELECT COUNT(*) AS n FROM deleted"
        case .sqlite: return delete
        }
    }

    /// The keys of up to `limit` rows this rule selects.
    func pickStatement(limit: Int) -> SQLQueryString {
        "SELECT \(unsafeRaw: key) FROM \(unsafeRaw: table) WHERE (\(condition)) LIMIT \(literal: limit)"
    }

    /// The key's columns.
    var keyColumns: [String] { key.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }

    /// SQLite's deletes of a picked batch (``pickStatement(limit:)``) by its `keys` (one value per key column each): each
    /// dependent's rows first, then the rule's own; each answers a row for each row it deleted.
    func deleteStatements(keys: [[String]]) -> [(table: String, statement: SQLQueryString)] {
        var values: SQLQueryString = "VALUES "
        for (index, key) in keys.enumerated() {
            values += index == 0 ? "(\(binds: key))" : ", (\(binds: key))"
        }
        let deletes = dependents.map { ($0.table, $0.columns) } + [(table, key)]
        return deletes.map { table, columns in
            (table, "DELETE FROM \(unsafeRaw: table) WHERE (\(unsafeRaw: columns)) IN (\(values)) RETURNING 1 AS deleted")
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
    /// Access tokens that expired before `cutoff`. A token whose session ended before then goes with its session
    /// (``purgeEndedSessions(before:now:)``): found by expiry alone, a batch is a range of an index.
    static func purgeExpiredAccessTokens(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "access_tokens", key: "token_hash", condition: "expires_at < \(bind: cutoff)")
    }

    /// Refresh tokens that expired before `cutoff`; as ``purgeExpiredAccessTokens(before:)``.
    static func purgeExpiredRefreshTokens(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "refresh_tokens", key: "token_hash", condition: "expires_at < \(bind: cutoff)")
    }

    /// A session's tokens, deleted with it: all it still has (the expired-token rules ran first; a dry run counts those
    /// they leave, the ones still valid at `cutoff`).
    private static func tokens(leftAt cutoff: Int64) -> [PurgeRule.Dependent] {
        ["access_tokens", "refresh_tokens"].map {
            PurgeRule.Dependent(table: $0, columns: "session_id", leftByEarlierRules: "expires_at >= \(bind: cutoff)")
        }
    }

    /// No challenge bound to the session is live at `now`: looked up by the session, the expiry compared as a difference
    /// (which no index serves), as in ``ChallengesTable/take``. Written `c.expires_at >= now`, PostgreSQL compared each
    /// session with every live challenge through the expiry index once the purge had emptied the challenges and autovacuum
    /// analyzed them (a batch of 1 000 sessions against 2 000 live challenges: 332 ms, against 2 ms).
    private static func noLiveChallenge(_ now: Int64) -> SQLQueryString {
        "NOT EXISTS (SELECT 1 FROM challenges c WHERE c.session_id = sessions.id AND c.expires_at - \(bind: now) >= 0)"
    }

    /// Sessions that ended before `cutoff`, with the tokens they still have (a refresh token still valid when a later
    /// sign-in replaced its session, say), unless a challenge bound to one is live at `now`. A batch is a range of the
    /// index of ended sessions. The audit log keeps their ids.
    ///
    /// Their tokens used to go first, by a rule that asked of every token whether its session had ended: no index answers
    /// that, so each batch read the token table from its start, and on a database that keeps 30 days of tokens a day's
    /// backlog took time growing with the square of its size (docs/PERFORMANCE.md, "Retention at scale").
    static func purgeEndedSessions(before cutoff: Int64, now: Int64) -> PurgeRule {
        PurgeRule(
            table: "sessions",
            key: "id",
            condition: "ended_at < \(bind: cutoff) AND \(noLiveChallenge(now))",
            dependents: tokens(leftAt: cutoff)
        )
    }

    /// Sessions that never ended but were abandoned: started before `cutoff`, with every token expired before then, and
    /// no challenge live at `now`. The expired-token rules took their tokens; any left go with them. A batch reads the
    /// index of live sessions whole (no index orders them by age); a purge finds few, so it is about one batch a run.
    static func purgeAbandonedSessions(before cutoff: Int64, now: Int64) -> PurgeRule {
        PurgeRule(
            table: "sessions",
            key: "id",
            condition: """
                ended_at IS NULL AND created_at < \(bind: cutoff) \
                AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.session_id = sessions.id AND a.expires_at >= \(bind: cutoff)) \
                AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id AND r.expires_at >= \(bind: cutoff)) \
                AND \(noLiveChallenge(now))
                """,
            dependents: tokens(leftAt: cutoff)
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
    /// Deliveries that ended (delivered, given up or dropped) and were made before `cutoff`, with their attempts; a
    /// pending delivery keeps all of them. A batch is a range of the index of ended deliveries by age.
    static func purgeDeliveries(before cutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: "webhook_deliveries",
            key: "event_id, endpoint_id",
            condition: "status <> 'pending' AND created_at < \(bind: cutoff)",
            dependents: [PurgeRule.Dependent(table: "webhook_attempts", columns: "event_id, endpoint_id")]
        )
    }

    /// Events made before `cutoff` that no delivery refers to any more (each looked up by its key in the deliveries').
    /// The deliveries' rule runs first, so an event whose last deliveries it takes goes in the same run; a dry run counts
    /// it by the deliveries that rule keeps (one pending, or made since `cutoff`).
    ///
    /// The purge itself asks for no delivery at all: a delivery that ends between the two rules is still there, and the
    /// event waits for the next run rather than failing the foreign key.
    static func purgeEvents(before cutoff: Int64) -> PurgeRule {
        func noDelivery(_ kept: SQLQueryString) -> SQLQueryString {
            """
            created_at < \(bind: cutoff) \
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id\(kept))
            """
        }
        return PurgeRule(
            table: "webhook_events",
            key: "id",
            condition: noDelivery(""),
            counted: noDelivery(" AND (d.status = 'pending' OR d.created_at >= \(bind: cutoff))")
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
