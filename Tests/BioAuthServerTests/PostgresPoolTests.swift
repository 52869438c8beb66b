import Foundation
import Logging
import SQLKit
import Synchronization
import TestTools
import Testing

@testable import BioAuthServer

/// `--database-connections` bounds what one instance holds open on PostgreSQL: the number DEPLOYMENT.md sizes
/// `max_connections` by.
@Suite("PostgreSQL connection pool")
struct PostgresPoolTests {
    @Test(
        "an instance opens at most the connections it is given, however many units of work run at once",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
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
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
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

    @Test(
        "a unit of work left waiting on a connection the server closed ends with not_ready, and the next unit runs on a new connection",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func closedConnectionEndsUnit() async throws {
        try await TestDatabase.withOpened(.postgres, connections: 2) { database in
            let backend = Mutex<Int?>(nil)
            let parked = Mutex<CheckedContinuation<Void, Never>?>(nil)
            // A unit of work that learns its connection's backend, then waits on something no answer from PostgreSQL can
            // end: what a query PostgresNIO never answers looks like to its caller.
            let unit = Task {
                try await database.transaction { db in
                    let pid = try await db.raw("SELECT pg_backend_pid() AS pid").first()!.decode(column: "pid", as: Int.self)
                    await withCheckedContinuation { continuation in
                        parked.withLock { $0 = continuation }
                        backend.withLock { $0 = pid }
                    }
                }
            }
            var pid: Int?
            while pid == nil {
                try await Task.sleep(for: .milliseconds(20))
                pid = backend.withLock { $0 }
            }
            let terminated = try #require(pid)
            try await TestDatabase.admin(try #require(StorageBackend.postgresURL)) { db in
                try await db.raw("SELECT pg_terminate_backend(CAST(\(bind: terminated) AS INTEGER))").run()
            }
            switch await unit.result {
            case .failure(let error as APIError): #expect(error.code == .notReady && error.retryAfter == 1, "\(error)")
            case let outcome: Issue.record("the unit of work should have ended with not_ready: \(outcome)")
            }
            parked.withLock { $0.take() }?.resume()

            let next = try await database.transaction { db in
                try await db.raw("SELECT pg_backend_pid() AS pid").first()!.decode(column: "pid", as: Int.self)
            }
            #expect(next != terminated, "the next unit runs on another connection")
        }
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
