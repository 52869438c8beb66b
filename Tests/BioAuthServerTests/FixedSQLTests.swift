import Foundation
import Logging
import PostgresKit
import SQLKit
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
}
