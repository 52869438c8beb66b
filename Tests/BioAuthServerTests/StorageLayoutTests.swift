import Foundation
import Testing

/// Every statement on a table lives with that table in `Storage/` (docs/ARCHITECTURE.md, "Storage"): the rules
/// (`Service/`, `Operators/`, `Webhooks/`, `Console/`, `Maintenance/`, …) call intent-named table methods and hold no SQL.
@Suite("Storage layout: no SQL outside Storage/")
struct StorageLayoutTests {
    /// What SQL looks like in Swift source: SQLKit's raw statements, binds and builders, and SQL text in a string literal
    /// (its keywords in capitals, as the tables write them; a statement in lower case still needs a raw statement or a
    /// builder to run, which the other marks find).
    static var sqlMarks: [(name: String, pattern: Regex<Substring>)] {
        [
            ("a raw statement", #/\.raw\(/#),
            ("SQL text", #/SQLQueryString|FixedSQL\(/#),
            ("a bind", #/\\\(bind:|SQLBind\(|SQLLiteral/#),
            ("a builder", #/\.(?:select|insert|update|delete)\((?:into:|from:|\)|")/#),
            (
                "SQL in a string",
                #/"\s*(?:SELECT\s|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX|UNIQUE)|ALTER\s+TABLE|DROP\s+|WITH\s+\w+\s+AS)/#
            ),
        ]
    }

    /// The marks of SQL in `text`, by name.
    static func sql(in text: String) -> [String] {
        sqlMarks.filter { text.contains($0.pattern) }.map(\.name)
    }

    @Test("the detector finds each kind of SQL, and not prose about it")
    func detector() {
        #expect(Self.sql(in: #"try await db.raw("x").run()"#) == ["a raw statement"])
        #expect(Self.sql(in: #"let q: SQLQueryString = "…""#) == ["SQL text"])
        #expect(Self.sql(in: #"WHERE id = \(bind: id)"#) == ["a bind"])
        #expect(Self.sql(in: #"db.select().from("devices")"#) == ["a builder"])
        #expect(Self.sql(in: #"db.delete(from: "sessions")"#) == ["a builder"])
        #expect(Self.sql(in: #"let text = "SELECT * FROM accounts""#) == ["SQL in a string"])
        #expect(Self.sql(in: #"let t = "UPDATE devices SET revoked_at = 1""#) == ["SQL in a string"])
        #expect(Self.sql(in: "/// Selects the payment, then updates its status.").isEmpty)
        #expect(Self.sql(in: #"throw APIError(.malformedRequest, "Select one of them.")"#).isEmpty)
    }

    @Test("no file of the server outside Storage/ holds SQL text, a raw statement, a bind or a query builder")
    func noSQLOutsideStorage() throws {
        let files = try SourceTree.swiftFiles()
        #expect(files.contains { $0.path.hasPrefix("Storage/Tables/") }, "the tables were found")
        let offenders = files.filter { !$0.path.hasPrefix("Storage/") }.flatMap { file in
            Self.sql(in: file.text).map { "\(file.path): \($0)" }
        }
        #expect(offenders.isEmpty, "move these statements into their table's file in Storage/Tables/: \(offenders)")
        // And the detector sees what Storage/ does hold, so an empty list above is not a blind test.
        #expect(files.filter { $0.path.hasPrefix("Storage/Tables/") }.contains { !Self.sql(in: $0.text).isEmpty })
    }
}
