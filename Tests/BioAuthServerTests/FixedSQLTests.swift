import Foundation
import Logging
import PostgresKit
import SQLKit
import TestTools
import Testing

@testable import BioAuthServer

/// Statements written once as SQL text (``FixedSQL``) must run the same on both engines, and a statement whose
/// values do not match its placeholders must be refused before it runs, not run with a value missing.
@Suite("Fixed SQL statements")
struct FixedSQLTests {
    static let insert = FixedSQL("INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1)")

    @Test(
        "on PostgreSQL the placeholders are numbered and the values follow in order; SQLite's dialect numbers them too, the same statement as the text SQLite runs"
    )
    func rendering() {
        let statement = Self.insert("b", Int64(5))
        var postgres = SQLSerializer(database: SQLiteDialectTests.Renderer(dialect: PostgresDialect()))
        statement.serialize(to: &postgres)
        #expect(postgres.sql == "INSERT INTO rate_limits (bucket, window_start, hits) VALUES ($1, $2, 1)")
        #expect(postgres.binds.count == 2 && postgres.binds[0] as? String == "b" && postgres.binds[1] as? Int64 == 5)
        var sqlite = SQLSerializer(database: SQLiteDialectTests.Renderer(dialect: LiteralIdentifiersSQLiteDialect.shared))
        statement.serialize(to: &sqlite)
        #expect(sqlite.sql == "INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?1, ?2, 1)")
        #expect(sqlite.sql.replacingOccurrences(of: "?1", with: "?").replacingOccurrences(of: "?2", with: "?") == Self.insert.text)
        #expect(Self.insert.placeholderCount == 2)
    }

    @Test("a statement with too few or too many values is refused and writes nothing")
    func bindCount() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fixed-\(UUID()).sqlite").path
        let database = try await openDatabase(path, logger: Logger(label: "fixed"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for statement in [Self.insert("b"), Self.insert("b", Int64(5), Int64(6))] {
            await #expect(throws: FixedStatement.BindCountMismatch.self) {
                try await database.transaction { db in try await db.run(statement) }
            }
        }
        try await database.transaction { db in try await db.run(Self.insert("b", Int64(5))) }
        let rows = try await database.transaction { db in
            try await db.all(FixedSQL("SELECT bucket, window_start FROM rate_limits")())
        }
        #expect(rows.count == 1)
        #expect(try rows.first?.decode(column: "window_start", as: Int64.self) == 5)
        try await database.close()
    }

    @Test(
        "on PostgreSQL a statement is prepared once per connection, under a name from its text, and a nil binds as a NULL of its type whichever call comes first",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func preparedOnPostgres() async throws {
        let test = try await TestDatabase.make(.postgres)
        let database = try await openDatabase(test.location, logger: Logger(label: "fixed"))
        let insert = FixedSQL("INSERT INTO fixed_test (a, b) VALUES (?, ?)")
        let select = FixedSQL("SELECT a, b FROM fixed_test WHERE b IS NULL OR b > ? ORDER BY b")
        #expect(FixedSQL(insert.text).preparedName == insert.preparedName && insert.preparedName != select.preparedName)
        #expect(insert.postgresText == "INSERT INTO fixed_test (a, b) VALUES ($1, $2)")
        let (rows, prepared) = try await database.standalone { db in
            try await db.raw("CREATE TEMPORARY TABLE fixed_test (a TEXT, b BIGINT)").run()
            try await db.run(insert(String?.none, Int64?.none))
            try await db.run(insert(String?("x"), Int64?(5)))
            try await db.run(insert("y", Int64(7)))
            let rows = try await db.all(select(Int64(5))).map { row in
                (try row.decode(column: "a", as: String?.self), try row.decode(column: "b", as: Int64?.self))
            }
            let prepared = try await db.raw(
                "SELECT name, parameter_types::TEXT AS types FROM pg_prepared_statements WHERE name IN (\(bind: insert.preparedName), \(bind: select.preparedName)) ORDER BY name"
            ).all().map { row in [try row.decode(column: "name", as: String.self): try row.decode(column: "types", as: String.self)] }
            return (rows, prepared.reduce(into: [String: String]()) { $0.merge($1) { a, _ in a } })
        }
        #expect(rows.count == 2 && rows[0].0 == "y" && rows[0].1 == 7 && rows[1].0 == nil && rows[1].1 == nil)
        #expect(prepared == [insert.preparedName: "{text,bigint}", select.preparedName: "{bigint}"])
        try await database.close()
        await test.drop()
    }

    @Test("outside the call that runs it, the prepared statement names no statement and its text fails rather than run another's")
    func unboundStatement() {
        #expect(PreparedFixedStatement.name == "bioauth_unbound")
        #expect(PreparedFixedStatement.sql.contains("outside its scope"))
        PreparedFixedStatement.$running.withValue(FixedSQLTests.insert) {
            #expect(PreparedFixedStatement.name == FixedSQLTests.insert.preparedName)
            #expect(PreparedFixedStatement.sql == FixedSQLTests.insert.postgresText)
        }
    }
}
