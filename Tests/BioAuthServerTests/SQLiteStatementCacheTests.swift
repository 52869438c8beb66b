import Foundation
import Logging
import SQLiteKit
import Testing

@testable import BioAuthServer

/// Cached statements must stay compiled from one run to the next, and a cached statement must never run with a
/// value left over from its previous run.
@Suite("SQLite statement cache")
struct SQLiteStatementCacheTests {
    @Test("the access-token lookup of every authenticated request is compiled once, not again on every run")
    func accessTokenLookupStaysCompiled() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID()).sqlite").path
        let database = try await SQLiteDatabaseExecutor.open(path: path, logger: Logger(label: "cache"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for token in ["first", "second", "third", "fourth", "fifth"] {
            let row = try await database.transaction { db in try await db.first(SessionsTable.byAccessToken(BioAuthService.tokenHash(token))) }
            #expect(row == nil)
        }
        let statistics = try #require(database.statementStatistics()[SessionsTable.byAccessToken.text])
        #expect(statistics.runs == 5)
        // SQLite marks this join's plan as tunable to its bound value; clearing the bindings after each run made it
        // expire, and every run compiled it again.
        #expect(statistics.recompilations == 0)
        try await database.close()
    }

    @Test("a cached statement given fewer or more values than it has parameters is refused, not run with an old value")
    func parameterCount() throws {
        let handle = try SQLiteHandle(path: ":memory:")
        defer { handle.close() }
        handle.setUnit(1)
        var rows: [[SQLiteData]] = []
        let collect: (SQLiteResultRow) -> Void = { rows.append($0.values) }
        try handle.execute("SELECT ? AS a, ? AS b", binds: [.integer(1), .integer(2)], unit: 1, onRow: collect)
        #expect(throws: SQLiteStorageError.self) { try handle.execute("SELECT ? AS a, ? AS b", binds: [.integer(3)], unit: 1, onRow: collect) }
        #expect(throws: SQLiteStorageError.self) {
            try handle.execute("SELECT ? AS a, ? AS b", binds: [.integer(3), .integer(4), .integer(5)], unit: 1, onRow: collect)
        }
        try handle.execute("SELECT ? AS a, ? AS b", binds: [.integer(6), .integer(7)], unit: 1, onRow: collect)
        #expect(rows == [[.integer(1), .integer(2)], [.integer(6), .integer(7)]])
    }
}
