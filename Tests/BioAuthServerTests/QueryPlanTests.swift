import Foundation
import Logging
import SQLKit
import TestTools
import Testing

@testable import BioAuthServer

/// Statements that run on every sign-in or refresh must find their rows through an index, so that their cost
/// does not grow with the history of the account or the size of the table. Checked with SQLite's own plan for
/// the statements the server builds, on the migrated schema.
@Suite("Query plans")
struct QueryPlanTests {
    /// SQLite's plan for `statement`, one line per step (`SEARCH … USING INDEX …` or `SCAN …`).
    static func plan(_ statement: FixedStatement) async throws -> [String] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID()).sqlite").path
        let database = try await openDatabase(path, logger: Logger(label: "plan"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let explained = FixedStatement(sql: FixedSQL("EXPLAIN QUERY PLAN " + statement.sql.text), binds: statement.binds)
        let lines = try await database.transaction { db in
            try await db.all(explained).map { try $0.decode(column: "detail", as: String.self) }
        }
        try await database.close()
        return lines
    }

    @Test("every statement a table lists as hot finds its rows through an index, never by reading a whole table")
    func hotStatementsUseIndexes() async throws {
        let statements = HotStatements.all
        #expect(Set(statements.map(\.family)).count >= 6, "the tables list their hot statements")
        for (family, statement) in statements {
            let lines = try await Self.plan(statement)
            let scans = lines.filter { $0.hasPrefix("SCAN") && !$0.hasPrefix("SCAN CONSTANT ROW") }
            #expect(scans.isEmpty, "\(family): \(statement.sql.text) reads a whole table: \(lines)")
        }
    }

    @Test(
        "on PostgreSQL too every hot statement finds its rows through an index, and a payment is authorized through its primary key, never the index of pending payments",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func hotStatementsUseIndexesOnPostgres() async throws {
        try await TestDatabase.withOpened(.postgres) { database in
            for (family, statement) in HotStatements.postgres {
                let lines = try await Self.postgresPlan(statement, on: database)
                #expect(!lines.contains { $0.contains("Seq Scan") }, "\(family): \(statement.sql.text) reads a whole table: \(lines)")
                if statement.sql.text == PaymentsTable.authorize.text {
                    #expect(lines.contains { $0.contains("payments_pkey") }, "\(lines)")
                }
            }
        }
    }

    /// PostgreSQL's plan for `statement`, prepared as the server runs it, one line per step.
    static func postgresPlan(_ statement: FixedStatement, on database: any DatabaseExecutor) async throws -> [String] {
        let explained = FixedStatement(sql: FixedSQL("EXPLAIN " + statement.sql.text), binds: statement.binds)
        return try await database.transaction { db in try await db.all(explained).map { try $0.decode(column: "QUERY PLAN", as: String.self) } }
    }

    /// Runs `body` on a PostgreSQL database whose statistics say every challenge has expired, as they do once a purge has
    /// emptied the table and autovacuum has analyzed what was left, while live challenges (bound to 300 sessions that
    /// ended long ago) have come since. Autovacuum is off for the challenges, so that no analyze corrects the statistics
    /// while the test runs.
    static func afterPurge<T>(_ body: (any DatabaseExecutor) async throws -> T) async throws -> T {
        try await TestDatabase.withOpened(.postgres) { database in
            try await database.transaction { db in
                try await db.raw("ALTER TABLE challenges SET (autovacuum_enabled = false)").run()
                try await db.raw(
                    """
                    INSERT INTO accounts (id, username, password_hash, failed_password_attempts, created_at, password_changed_at) \
                    VALUES ('a', 'alice', 'x', 0, 0, 0)
                    """
                ).run()
                try await db.raw(
                    """
                    INSERT INTO sessions (id, account_id, installation_id, method, created_at, ended_at) \
                    SELECT 's-' || g, 'a', 'i-' || g, 'password', 0, 10 FROM generate_series(1, 300) g
                    """
                ).run()
                // What the analyze saw: challenges that had all expired, at one time.
                try await db.raw(
                    """
                    INSERT INTO challenges (id, purpose, challenge, account_id, created_at, expires_at) \
                    SELECT 'old-' || g, 'signin', 'c', 'a', 0, 1000 FROM generate_series(1, 50) g
                    """
                ).run()
                try await db.raw("ANALYZE").run()
            }
            // The sign-ins since: challenges live until long after any clock a test reads.
            try await database.transaction { db in
                try await db.raw(
                    """
                    INSERT INTO challenges (id, purpose, challenge, account_id, session_id, created_at, expires_at) \
                    SELECT 'live-' || g, 'payment', 'c', 'a', 's-' || (g % 300 + 1), 5000, \(bind: Self.farFuture) + g \
                    FROM generate_series(1, 2000) g
                    """
                ).run()
            }
            return try await body(database)
        }
    }

    /// When ``afterPurge(_:)``'s live challenges expire, in milliseconds: in the year 2255.
    static let farFuture = Int64(9_000_000_000_000)

    @Test(
        "on PostgreSQL a challenge is used through its primary key even when the statistics say none is live (after a purge), never by reading the live ones",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func challengeUseAfterPurge() async throws {
        let now = Date().millisecondsSince1970
        let plans = try await Self.afterPurge { database in
            // The statement as it was (`expires_at > ?`) too, which that state plans on the expiry index: the check can fail.
            let before = FixedSQL(ChallengesTable.take.text.replacingOccurrences(of: "expires_at - ? > 0", with: "expires_at > ?"))
            return [
                try await Self.postgresPlan(ChallengesTable.take(now, "live-7", now), on: database),
                try await Self.postgresPlan(before(now, "live-7", now), on: database),
            ]
        }
        #expect(
            plans[0].contains { $0.contains("challenges_pkey") } && !plans[0].contains { $0.contains("using challenges_by_expiry ") },
            "\(plans[0])"
        )
        #expect(plans[1].contains { $0.contains("using challenges_by_expiry ") }, "\(plans[1])")
    }

    @Test(
        "on PostgreSQL no retention batch but the expired challenges' own reads the live challenges through their expiry, whatever the statistics",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func purgeBatchesAfterPurge() async throws {
        // The sessions' rules' check as it was written, with each session compared with every live challenge found through
        // the expiry index in that state: the check below can fail.
        let now = Date().millisecondsSince1970
        let before = PurgeRule(
            table: "sessions",
            key: "id",
            condition:
                "ended_at < \(bind: now) AND NOT EXISTS (SELECT 1 FROM challenges c WHERE c.session_id = sessions.id AND c.expires_at >= \(bind: now))"
        )
        let (plans, old) = try await Self.afterPurge { database in
            let old = try await database.transaction { db in
                try await db.raw("EXPLAIN \(before.deleteStatement(limit: RetentionPolicy.defaultBatchSize(for: .postgres), engine: .postgres))")
                    .all()
                    .map { try $0.decode(column: "QUERY PLAN", as: String.self) }
            }
            return (try await Self.purgePlans(database, limit: RetentionPolicy.defaultBatchSize(for: .postgres)), old)
        }
        #expect(plans.contains { $0.kind == .sessions })
        for (kind, lines) in plans where kind != .challenges {
            #expect(!lines.contains { $0.contains("using challenges_by_expiry ") }, "\(kind): \(lines.joined(separator: "\n"))")
        }
        #expect(old.contains { $0.contains("using challenges_by_expiry ") }, "\(old.joined(separator: "\n"))")
    }

    @Test(
        "on PostgreSQL autovacuum does not shrink the tables every sign-in uses, so it never holds their exclusive lock after a purge",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func noTruncationOfSignInTables() async throws {
        let options = try await TestDatabase.withOpened(.postgres) { database in
            try await database.transaction { db in
                try await db.raw(
                    "SELECT relname, array_to_string(reloptions, ',') AS options FROM pg_class WHERE relkind = 'r' AND reloptions IS NOT NULL"
                )
                .all().reduce(into: [String: String]()) {
                    $0[try $1.decode(column: "relname", as: String.self)] = try $1.decode(column: "options", as: String.self)
                }
            }
        }
        #expect(
            options
                == Dictionary(
                    uniqueKeysWithValues: ["challenges", "access_tokens", "refresh_tokens", "sessions"].map { ($0, "vacuum_truncate=false") }
                )
        )
    }

    @Test("replacing an installation's session reads only live sessions, through their index")
    func endingSessions() async throws {
        let cases: [(String?, String?, String?)] = [
            ("i", nil, nil), ("i", nil, "k"), (nil, "d", nil), (nil, "d", "k"), ("i", "d", nil), ("i", "d", "k"),
        ]
        for (installation, device, keeping) in cases {
            let lines = try await Self.plan(
                SessionsTable.ending(account: "a", installationID: installation, device: device, keeping: keeping, reason: "replaced", at: 1)
            )
            #expect(lines.count == 1 && lines[0].hasPrefix("SEARCH sessions USING INDEX sessions_live_by_account_installation"), "\(lines)")
        }
    }

    @Test("a refresh deletes the session's access tokens through an index, not by reading the whole table")
    func deletingAccessTokens() async throws {
        let lines = try await Self.plan(SessionsTable.deleteAccessTokensSQL("s"))
        #expect(
            lines.count == 1 && lines[0].hasPrefix("SEARCH access_tokens USING") && lines[0].contains("INDEX access_tokens_by_session"),
            "\(lines)"
        )
    }
}

extension QueryPlanTests {
    @Test(
        "every foreign key that refers to a table the retention purge deletes from has an index on its column, so the engine's check of each deleted row does not read the whole referencing table"
    )
    func purgedTablesForeignKeysIndexed() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fk-\(UUID()).sqlite").path
        let database = try await openDatabase(path, logger: Logger(label: "fk"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let purged = Set(Retention(database: database, configuration: ServerConfiguration()).rules(now: Date()).map(\.purge.table))
        #expect(purged.contains("sessions") && purged.contains("challenges"))
        let unindexed = try await database.transaction { db in
            var unindexed: [String] = []
            let tables = try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()
                .map { try $0.decode(column: "name", as: String.self) }
            for table in tables {
                // The first column of each index of the table (its primary key's too).
                var leading: Set<String> = []
                for index in try await db.raw("SELECT name FROM pragma_index_list(\(bind: table))").all() {
                    let name = try index.decode(column: "name", as: String.self)
                    let first = try await db.raw("SELECT name FROM pragma_index_info(\(bind: name)) WHERE seqno = 0").first()
                    if let column = try first?.decode(column: "name", as: String.self) { leading.insert(column) }
                }
                for key in try await db.raw("SELECT \"table\" AS parent, \"from\" AS child FROM pragma_foreign_key_list(\(bind: table))").all() {
                    let parent = try key.decode(column: "parent", as: String.self)
                    let child = try key.decode(column: "child", as: String.self)
                    if purged.contains(parent) && !leading.contains(child) { unindexed.append("\(table).\(child) → \(parent)") }
                }
            }
            return unindexed
        }
        #expect(unindexed.isEmpty, "foreign keys to purged tables without an index: \(unindexed)")
        try await database.close()
    }
}

extension QueryPlanTests {
    /// Each retention rule's batch on `database`'s engine, with `database`'s plans for it: the one statement; or on SQLite,
    /// for a rule with dependents, the statement that picks the batch and the deletes by its keys that follow.
    static func purgePlans(
        _ database: any DatabaseExecutor,
        limit: Int
    ) async throws -> [(kind: Retention.Kind, plan: [String])] {
        let engine = database.dialect
        var plans: [(kind: Retention.Kind, plan: [String])] = []
        for rule in Retention(database: database, configuration: ServerConfiguration()).rules(now: Date()) {
            let statements: [SQLQueryString]
            if engine == .sqlite && !rule.purge.dependents.isEmpty {
                let keys = (0..<2).map { row in rule.purge.keyColumns.map { "\($0)-\(row)" } }
                statements = [rule.purge.pickStatement(limit: limit)] + rule.purge.deleteStatements(keys: keys).map(\.statement)
            } else {
                statements = [rule.purge.deleteStatement(limit: limit, engine: engine)]
            }
            for statement in statements {
                let plan = try await database.transaction { db in
                    switch engine {
                    case .sqlite: try await db.raw("EXPLAIN QUERY PLAN \(statement)").all().map { try $0.decode(column: "detail", as: String.self) }
                    case .postgres: try await db.raw("EXPLAIN \(statement)").all().map { try $0.decode(column: "QUERY PLAN", as: String.self) }
                    }
                }
                plans.append((rule.kind, plan))
            }
        }
        return plans
    }

    /// What may read a whole table or index in a purge, and why: console sessions are the bank's staff's, a small table;
    /// abandoned sessions are found by reading the index of live sessions (nothing orders them by age), about once a run,
    /// since few are found; a batch's own keys (SQLite's `VALUES` list).
    static let purgeScansAllowed = ["operator_sessions", "sessions_live_by_account_installation", "VALUES CLAUSE"]

    /// The batch sizes whose plans are checked: the smallest and largest allowed, and each engine's default (once, when it is
    /// one of them).
    static let batchSizes = Set(
        [RetentionPolicy.batchSizes.lowerBound, RetentionPolicy.batchSizes.upperBound]
            + [DatabaseDialect.sqlite, .postgres].map(RetentionPolicy.defaultBatchSize(for:))
    ).sorted()

    @Test(
        "every retention rule finds its batch through an index on SQLite, at every batch size: none reads a table from its start until it has a batch"
    )
    func purgeBatchesUseIndexes() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID()).sqlite").path
        let database = try await openDatabase(path, logger: Logger(label: "plan"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for limit in Self.batchSizes {
            for (kind, lines) in try await Self.purgePlans(database, limit: limit) {
                let scans = lines.filter { line in
                    line.hasPrefix("SCAN") && !line.hasPrefix("SCAN CONSTANT ROW") && !Self.purgeScansAllowed.contains { line.contains($0) }
                }
                #expect(scans.isEmpty, "\(kind), batches of \(limit): reads a whole table: \(lines)")
            }
        }
        try await database.close()
    }

    /// SQLite plans from the schema alone, so its plan above is the strict check. PostgreSQL plans from statistics, which an
    /// empty test database does not have: joining a batch to an empty table, it may pick a merge join over a whole index,
    /// which it does not on a loaded one (docs/PERFORMANCE.md, "Retention at scale", has the plans there). So here no
    /// table may be read sequentially.
    @Test(
        "every retention rule finds its batch through an index on PostgreSQL too, at every batch size: no table is read sequentially",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func purgeBatchesUseIndexesOnPostgres() async throws {
        let plans = try await TestDatabase.withOpened(.postgres) { database in
            var plans: [(limit: Int, kind: Retention.Kind, plan: [String])] = []
            for limit in Self.batchSizes {
                plans += try await Self.purgePlans(database, limit: limit).map { (limit, $0.kind, $0.plan) }
            }
            return plans
        }
        for (limit, kind, lines) in plans {
            let scans = lines.filter { line in line.contains("Seq Scan") && !Self.purgeScansAllowed.contains { line.contains($0) } }
            #expect(scans.isEmpty, "\(kind), batches of \(limit): reads a whole table: \(lines.joined(separator: "\n"))")
        }
    }
}
