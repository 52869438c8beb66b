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
