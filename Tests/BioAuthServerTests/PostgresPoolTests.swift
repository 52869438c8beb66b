import Foundation
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// `--database-connections` bounds what one instance holds open on PostgreSQL: the number DEPLOYMENT.md sizes
/// `max_connections` by.
@Suite("PostgreSQL connection pool")
struct PostgresPoolTests {
    @Test(
        "an instance opens at most the connections it is given, however many units of work run at once",
        .enabled(if: StorageBackend.postgresURL != nil)
    )
    func poolIsBounded() async throws {
        let test = try await TestDatabase.make(.postgres)
        let database = try await openDatabase(test.location, connections: 2, logger: Logger(label: "pool"))
        let seen = try await Self.connectionsSeen(units: 8) { _ in database }
        #expect(seen.count == 8 && seen.allSatisfy { (1...2).contains($0) }, "\(seen)")
        try await database.close()
        await test.drop()
    }

    @Test(
        "background work (the webhook dispatcher's) has connections of its own: an instance opens at most its pool and those",
        .enabled(if: StorageBackend.postgresURL != nil)
    )
    func backgroundConnectionsBounded() async throws {
        let test = try await TestDatabase.make(.postgres)
        let database = try await openDatabase(test.location, connections: 2, logger: Logger(label: "pool"))
        let seen = try await Self.connectionsSeen(units: 16) { unit in unit.isMultiple(of: 2) ? database : database.background }
        let most = 2 + PostgresDatabaseExecutor.backgroundConnections
        #expect(seen.count == 16 && seen.allSatisfy { (1...most).contains($0) } && seen.contains { $0 > 2 }, "\(seen)")
        try await database.close()
        await test.drop()
    }

    /// Runs `units` units of work at once, each on the executor `executor` picks for it, and returns how many client
    /// connections to the test's database each saw open (each holds its connection 50 ms, so that they overlap).
    static func connectionsSeen(units: Int, _ executor: @escaping @Sendable (Int) -> any DatabaseExecutor) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for unit in 0..<units {
                group.addTask {
                    try await executor(unit).transaction { db in
                        let row = try await db.raw(
                            "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'"
                        ).first()
                        try await db.raw("SELECT pg_sleep(0.05)").run()
                        return try row?.decode(column: "n", as: Int.self) ?? 0
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
    }
}
