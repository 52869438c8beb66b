import Foundation
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// The embedded SQLite executor runs units of work one at a time and commits them in groups. These tests hold it
/// to what that must not change: each unit sees the ones before it, a unit that throws leaves nothing, and no
/// unit returns before its writes are committed — or returns at all when they were lost.
@Suite("SQLite group commit")
struct SQLiteGroupCommitTests {
    static func withDatabase(_ body: (String, SQLiteDatabaseExecutor) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(UUID()).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let executor = try await SQLiteDatabaseExecutor.open(path: path, logger: Logger(label: "group-commit"))
        try await executor.transaction { db in
            try await db.raw("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)").run()
            try await db.raw("CREATE TABLE tally (id INTEGER PRIMARY KEY, count INTEGER NOT NULL)").run()
            try await db.raw("INSERT INTO tally (id, count) VALUES (1, 0)").run()
        }
        do {
            try await body(path, executor)
        } catch {
            try? await executor.close()
            throw error
        }
        try await executor.close()
    }

    static func count(_ table: String, on executor: any DatabaseExecutor) async throws -> Int {
        try await executor.transaction { db in
            try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first()!.decode(column: "n", as: Int.self)
        }
    }

    @Test("200 concurrent read-then-write units lose no update, and a second open of the file sees all of them")
    func serializableAndDurable() async throws {
        try await Self.withDatabase { path, executor in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        try await executor.transaction { db in
                            let count = try await db.raw("SELECT count FROM tally WHERE id = 1").first()!.decode(column: "count", as: Int.self)
                            try await db.raw("UPDATE tally SET count = \(bind: count + 1) WHERE id = 1").run()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let reopened = try await SQLiteDatabaseExecutor.open(path: path, logger: Logger(label: "reopen"))
            let count = try await reopened.transaction { db in
                try await db.raw("SELECT count FROM tally WHERE id = 1").first()!.decode(column: "count", as: Int.self)
            }
            try await reopened.close()
            #expect(count == 200)
        }
    }

    @Test("a unit that throws — by itself or on a failing statement — leaves nothing, and the rest of its group commits")
    func failedUnitsLeaveNothing() async throws {
        struct Abandoned: Error {}
        try await Self.withDatabase { _, executor in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        do {
                            try await executor.transaction { db in
                                try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index), 'kept')").run()
                                if index % 5 == 0 { throw Abandoned() }
                                // A primary key that is taken: the statement fails and so does the unit.
                                if index % 5 == 1 { try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index), 'twice')").run() }
                            }
                            return true
                        } catch {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 36)
            let labels = try await executor.transaction { db in
                try await db.raw("SELECT id FROM items ORDER BY id").all().map { try $0.decode(column: "id", as: Int.self) }
            }
            #expect(labels == (0..<60).filter { $0 % 5 > 1 })
        }
    }

    @Test("when SQLite ends a group's transaction, every unit of the group fails — none reports writes that were lost")
    func lostGroupFailsEveryUnit() async throws {
        try await Self.withDatabase { _, executor in
            let (holding, signal) = AsyncStream.makeStream(of: Void.self)
            let first = Task {
                try await executor.transaction { db in
                    try await db.raw("INSERT INTO items (id, label) VALUES (1, 'first')").run()
                    signal.finish()
                    // Stay in the group until the next unit is waiting for the connection.
                    while executor.waitingCount == 0 { await Task.yield() }
                }
            }
            for await _ in holding {}  // the first unit holds the connection
            let (secondHolding, secondSignal) = AsyncStream.makeStream(of: Void.self)
            let second = Task {
                try await executor.transaction { db in
                    secondSignal.finish()
                    try await db.raw("INSERT INTO items (id, label) VALUES (2, 'second')").run()
                    // Stands for an I/O error after which SQLite rolls the whole transaction back.
                    try await db.raw("ROLLBACK").run()
                    // Hand the connection on rather than commit: the next unit must not revive the group.
                    while executor.waitingCount == 0 { await Task.yield() }
                }
            }
            for await _ in secondHolding {}
            let third = Task {
                try await executor.transaction { db in try await db.raw("INSERT INTO items (id, label) VALUES (3, 'third')").run() }
            }
            await #expect(throws: SQLiteStorageError.self) { try await first.value }
            await #expect(throws: SQLiteStorageError.self) { try await second.value }
            // The executor carries on with the next group.
            try await third.value
            let labels = try await executor.transaction { db in
                try await db.raw("SELECT label FROM items").all().map { try $0.decode(column: "label", as: String.self) }
            }
            #expect(labels == ["third"])
        }
    }

    @Test("a unit whose savepoint cannot be rolled back leaves nothing: its group is given up instead of committed")
    func savepointTroubleRollsBackGroup() async throws {
        struct Abandoned: Error {}
        try await Self.withDatabase { _, executor in
            await #expect(throws: Abandoned.self) {
                try await executor.transaction { db in
                    try await db.raw("INSERT INTO items (id, label) VALUES (1, 'must not stay')").run()
                    // Ends the unit's savepoint early, so the executor's ROLLBACK TO finds none.
                    try await db.raw("RELEASE bioauth_unit").run()
                    throw Abandoned()
                }
            }
            let items0 = try await Self.count("items", on: executor)
            #expect(items0 == 0)
        }
    }

    @Test("the database a unit of work was given refuses statements once the unit is over")
    func leakedDatabaseRefused() async throws {
        try await Self.withDatabase { _, executor in
            let leaked = try await executor.transaction { db in db }
            await #expect(throws: SQLiteStorageError.self) {
                try await leaked.raw("INSERT INTO items (id, label) VALUES (9, 'late')").run()
            }
            let items0 = try await Self.count("items", on: executor)
            #expect(items0 == 0)
        }
    }

    @Test("after close, a unit of work throws instead of touching the file")
    func closed() async throws {
        let executor = try await SQLiteDatabaseExecutor.open(path: ":memory:", logger: Logger(label: "closed"))
        try await executor.close()
        await #expect(throws: SQLiteStorageError.self) { try await executor.transaction { db in try await db.raw("SELECT 1").run() } }
    }

    @Test("one statement per call: text after the first statement is refused, not ignored")
    func oneStatement() async throws {
        try await Self.withDatabase { _, executor in
            await #expect(throws: SQLiteStorageError.self) {
                try await executor.transaction { db in
                    try await db.raw("INSERT INTO items (id, label) VALUES (1, 'a'); DELETE FROM items").run()
                }
            }
            let items0 = try await Self.count("items", on: executor)
            #expect(items0 == 0)
        }
    }

    @Test(
        "units of work run on a thread the system knows by the executor's thread name (what the bench measures)",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/comm"))
    )
    func threadName() async throws {
        try await Self.withDatabase { _, executor in
            for _ in 0..<5 {
                let name = try await executor.transaction { _ in
                    try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
                }
                #expect(name == SQLiteDatabaseExecutor.threadName)
            }
        }
    }
}

extension SQLiteGroupCommitTests {
    @Test("a file another process keeps locked past the busy timeout refuses units of work as not_ready (503), and serves again once free")
    func lockedByAnotherProcess() async throws {
        try await Self.withDatabase { path, executor in
            // Another connection to the file, as `bioauth admin purge` in another process would hold it.
            let other = try SQLiteHandle(path: path)
            defer { other.close() }
            try other.execute("BEGIN IMMEDIATE")
            let refused = await #expect(throws: APIError.self) {
                try await executor.transaction { db in try await db.raw("INSERT INTO items (label) VALUES ('blocked')").run() }
            }
            #expect(refused?.code == .notReady && refused?.retryAfter == 1 && refused?.status == .serviceUnavailable)
            try other.execute("ROLLBACK")
            try await executor.transaction { db in try await db.raw("INSERT INTO items (label) VALUES ('served')").run() }
            #expect(try await Self.count("items", on: executor) == 1, "only the unit after the lock was released wrote")
        }
    }
}
