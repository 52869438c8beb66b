import Logging
import NIOConcurrencyHelpers
import NIOPosix
import SQLKit

/// SQLite through one connection, for the embedded default, with group commit.
///
/// SQLite has one writer at a time anyway; one connection used by one unit of work at a time makes every
/// unit exclusive, so no request can see or interleave with another's open work. Statements run at once on
/// the calling thread (no hop to a thread pool per statement).
///
/// **Group commit.** Committing is the slow part: with `synchronous = FULL` every commit waits for the disk.
/// Units of work that arrive while others run share one SQLite transaction: each runs inside its own
/// savepoint (a unit that throws rolls back only its own writes), and the last unit of the group — the one
/// that finds nobody waiting, or the group full — commits for all. **No unit returns before the commit that
/// makes its writes durable**; if that commit fails, every unit of the group throws. Reads inside a group see
/// the writes of the units before them, which is what running them one after the other would give.
///
/// The file is opened with WAL and foreign keys on; `":memory:"` gives a private in-memory database (tests).
/// Calls that may wait (opening, `BEGIN IMMEDIATE` when another process holds the lock, `COMMIT` waiting for
/// the disk) run on the executor's own thread, never on the concurrency pool's.
public final class SQLiteDatabaseExecutor: DatabaseExecutor {
    private let handle: SQLiteHandle
    private let worker: NIOThreadPool
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// Units of work committed together at most.
    static let maximumGroupSize = 64

    private struct State {
        /// A unit of work (or `close`) holds the connection.
        var held = false
        /// Those waiting for the connection, first come first served.
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// The group's SQLite transaction is open.
        var groupOpen = false
        /// Units of work done in the open group.
        var groupSize = 0
        /// Units of work of the open group waiting for its commit.
        var awaitingCommit: [CheckedContinuation<Void, any Error>] = []
        var nextUnit: UInt64 = 1
        var closed = false
    }

    private init(handle: SQLiteHandle, worker: NIOThreadPool, logger: Logger) {
        self.handle = handle
        self.worker = worker
        self.logger = logger
    }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public static func open(path: String, logger: Logger) async throws -> SQLiteDatabaseExecutor {
        let worker = NIOThreadPool(numberOfThreads: 1)
        worker.start()
        do {
            let handle = try await worker.runIfActive {
                let handle = try SQLiteHandle(path: path)
                do {
                    try handle.execute("PRAGMA foreign_keys = ON")
                    if path != ":memory:" {
                        try handle.execute("PRAGMA busy_timeout = 5000")
                        try handle.execute("PRAGMA journal_mode = WAL")
                        try handle.execute("PRAGMA synchronous = FULL")
                    }
                } catch {
                    handle.close()
                    throw error
                }
                return handle
            }
            let executor = SQLiteDatabaseExecutor(handle: handle, worker: worker, logger: logger)
            do {
                try await Migrations.run(on: executor, logger: logger)
            } catch {
                try? await executor.close()
                throw error
            }
            return executor
        } catch {
            try? await worker.shutdownGracefully()
            throw error
        }
    }

    public var dialect: DatabaseDialect { .sqlite }

    public func transaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        await acquire()
        let unit: UInt64
        do {
            unit = try await startUnit()
        } catch {
            try? await leave(waitForCommit: false)
            throw error
        }
        let outcome: Result<R, any Error>
        do {
            outcome = .success(try await body(SQLiteUnitDatabase(handle: handle, unit: unit, logger: logger)))
        } catch {
            outcome = .failure(error)
        }
        handle.setUnit(0)
        do {
            if case .success = outcome {
                try handle.execute("RELEASE bioauth_unit")
            } else {
                try handle.execute("ROLLBACK TO bioauth_unit")
                try handle.execute("RELEASE bioauth_unit")
            }
        } catch {
            logger.error("could not end a unit of work's savepoint", metadata: ["error": "\(error)"])
        }
        if handle.isAutocommit {
            // SQLite ended the group's transaction itself (it does after some I/O errors): nothing of the
            // group was kept, and every unit of it must say so.
            let lost = SQLiteStorageError(status: 4 /* SQLITE_ABORT */, message: "the transaction was rolled back; nothing in it was kept")
            finishGroup(.failure(lost))
            release()
            throw lost
        }
        state.withLockedValue { $0.groupSize += 1 }
        try await leave(waitForCommit: true)
        return try outcome.get()
    }

    /// Commits what is pending and closes the database. Units of work started afterwards throw.
    public func close() async throws {
        await acquire()
        if state.withLockedValue({ $0.closed }) {
            release()
            return
        }
        let committed = state.withLockedValue({ $0.groupOpen }) ? await commitGroup() : .success(())
        state.withLockedValue { $0.closed = true }
        let handle = self.handle
        _ = try? await worker.runIfActive { handle.close() }
        release()
        try? await worker.shutdownGracefully()
        try committed.get()
    }

    // MARK: Group commit

    /// Opens the group's transaction if this unit is the first of a group, then the unit's savepoint.
    private func startUnit() async throws -> UInt64 {
        let (closed, groupOpen, unit) = state.withLockedValue { state in
            defer { state.nextUnit += 1 }
            return (state.closed, state.groupOpen, state.nextUnit)
        }
        guard !closed else { throw SQLiteStorageError(status: 21 /* SQLITE_MISUSE */, message: "the database is closed") }
        if !groupOpen {
            let handle = self.handle
            try await worker.runIfActive { try handle.execute("BEGIN IMMEDIATE") }
            state.withLockedValue { $0.groupOpen = true }
        }
        try handle.execute("SAVEPOINT bioauth_unit")
        handle.setUnit(unit)
        return unit
    }

    /// Gives up the connection. When nobody is waiting for it, or the group is full, commits the group first
    /// (for every unit in it); otherwise the connection passes to the next unit, and with `waitForCommit` this
    /// unit waits for the group's commit.
    private func leave(waitForCommit: Bool) async throws {
        let (groupOpen, commitNow) = state.withLockedValue { state in
            (state.groupOpen, state.groupOpen && (state.waiting.isEmpty || state.groupSize >= Self.maximumGroupSize))
        }
        if commitNow {
            let result = await commitGroup()
            release()
            if waitForCommit { try result.get() }
            return
        }
        guard groupOpen, waitForCommit else {
            release()
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            state.withLockedValue { $0.awaitingCommit.append(continuation) }
            release()
        }
    }

    /// Commits the open group on the executor's thread and tells its waiting units how it went.
    private func commitGroup() async -> Result<Void, any Error> {
        let handle = self.handle
        let result: Result<Void, any Error>
        do {
            try await worker.runIfActive {
                do {
                    try handle.execute("COMMIT")
                } catch {
                    if !handle.isAutocommit { try? handle.execute("ROLLBACK") }
                    throw error
                }
            }
            result = .success(())
        } catch {
            logger.error("a group commit failed; none of its units was kept", metadata: ["error": "\(error)"])
            result = .failure(error)
        }
        finishGroup(result)
        return result
    }

    /// Closes the group and resumes the units waiting for its commit.
    private func finishGroup(_ result: Result<Void, any Error>) {
        let waiting = state.withLockedValue { state in
            defer {
                state.groupOpen = false
                state.groupSize = 0
                state.awaitingCommit = []
            }
            return state.awaitingCommit
        }
        for continuation in waiting { continuation.resume(with: result) }
    }

    // MARK: The connection's lock

    /// Waits for the connection; first come, first served.
    private func acquire() async {
        let free = state.withLockedValue { state in
            guard !state.held else { return false }
            state.held = true
            return true
        }
        if free { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let nowFree = state.withLockedValue { state in
                guard !state.held else {
                    state.waiting.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if nowFree { continuation.resume() }
        }
    }

    /// Passes the connection to the next waiter, or frees it.
    private func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// How many are waiting for the connection (tests).
    var waitingCount: Int { state.withLockedValue { $0.waiting.count } }
}
