import Logging
import NIOConcurrencyHelpers
import SQLKit

/// SQLite through one connection, for the embedded default, with group commit.
///
/// SQLite has one writer at a time anyway; one connection used by one unit of work at a time makes every
/// unit exclusive, so no request can see or interleave with another's open work. Units of work run on the
/// executor's own thread (`DatabaseThread`), and their statements run at once on it — no hop per statement.
///
/// **Group commit.** Committing is the slow part: with `synchronous = FULL` every commit waits for the disk.
/// Units of work that arrive while others run share one SQLite transaction: each runs inside its own
/// savepoint (a unit that throws rolls back only its own writes), and the unit that finds no other unit
/// arriving, or the group full, commits for all. **No unit returns success before the commit that makes its
/// writes durable**; if that commit fails, or SQLite ends the group's transaction itself (or a unit's savepoint
/// cannot be ended, and the group is rolled back), every unit of the group throws. A unit that throws wrote
/// nothing and throws at once. Reads inside a group see the writes of the units before them, which is what
/// running them one after the other would give.
///
/// The file is opened with WAL and foreign keys on; `":memory:"` gives a private in-memory database (tests). When
/// another process holds the file's write lock for longer than the busy timeout (5 s), a unit of work throws
/// `not_ready` (503, retry after a second) rather than an internal error.
public final class SQLiteDatabaseExecutor: DatabaseExecutor {
    private let handle: SQLiteHandle
    private let thread: DatabaseThread
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// Units of work committed together at most. A larger group flushes the disk less often but holds every unit in
    /// it until its last one is done; on the bench 16 gave the best throughput and latency (docs/PERFORMANCE.md).
    static let maximumGroupSize = 16

    /// The name of the thread every unit of work runs on, as the system shows it (`top -H`, `perf`, `/proc`): its CPU
    /// time per operation is the ceiling on operations per second, whatever the number of cores.
    public static let threadName = "bioauth-sqlite"

    private struct State {
        /// A unit of work (or `close`) holds the connection.
        var held = false
        /// Those waiting for the connection, first come first served.
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// Units of work (and `close` calls) that have started and not yet taken the connection.
        var arriving = 0
        /// The group whose SQLite transaction is open.
        var group: CommitGroup?
        var nextUnit: UInt64 = 1
        var closed = false
    }

    private init(handle: SQLiteHandle, thread: DatabaseThread, logger: Logger) {
        self.handle = handle
        self.thread = thread
        self.logger = logger
    }

    /// Runs and recompilations of each cached statement (``SQLiteHandle/statementStatistics()``), for tests.
    func statementStatistics() -> [String: (runs: Int, recompilations: Int)] { handle.statementStatistics() }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public static func open(path: String, logger: Logger) async throws -> SQLiteDatabaseExecutor {
        let thread = DatabaseThread(name: threadName)
        let handle: SQLiteHandle
        do {
            handle = try await thread.run {
                let handle = try SQLiteHandle(path: path)
                do {
                    try handle.execute("PRAGMA foreign_keys = ON")
                    // Savepoint sub-journals (one per unit of work) in memory rather than in temporary files.
                    try handle.execute("PRAGMA temp_store = MEMORY")
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
        } catch {
            thread.stop()
            throw error
        }
        if SQLiteHandle.othersMayRead(path) {
            logger.warning(
                "the database file may be read by other users of this machine: chmod 600 it (and its -wal and -shm files)",
                metadata: ["file": "\(path)"]
            )
        }
        let executor = SQLiteDatabaseExecutor(handle: handle, thread: thread, logger: logger)
        do {
            try await Migrations.run(on: executor, logger: logger)
        } catch {
            try? await executor.close()
            throw error
        }
        return executor
    }

    public var dialect: DatabaseDialect { .sqlite }

    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await CommittedLog.afterCommit(of: body) { body in
            state.withLockedValue { $0.arriving += 1 }
            let (outcome, group) = try await thread.run { await self.runUnit(body) }
            // A unit that succeeded waits for its group's commit, off the database thread; one that failed wrote
            // nothing and reports its own error at once.
            if let group, case .success = outcome { try await group.committed() }
            return try outcome.get()
        }
    }

    /// Commits what is pending and closes the database. Units of work started afterwards throw.
    public func close() async throws {
        state.withLockedValue { $0.arriving += 1 }
        try await thread.run {
            await self.acquire()
            defer { self.release() }
            guard !self.state.withLockedValue({ $0.closed }) else { return }
            let committed = self.commitGroup()
            self.state.withLockedValue { $0.closed = true }
            self.handle.close()
            try committed.get()
        }
        thread.stop()
    }

    // MARK: Units of work and group commit (on the database thread)

    /// Runs one unit of work in its savepoint; returns its outcome and the group whose commit it must wait for.
    private func runUnit<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async -> (Result<R, any Error>, CommitGroup?) {
        await acquire()
        let unit: UInt64
        do {
            unit = try startUnit()
        } catch {
            leave()
            return (.failure(error), nil)
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
            // Without its savepoint ended, this unit's writes could not be told apart from the group's (a failed
            // unit's might even be committed): give up the whole group, which the check below then reports.
            logger.error("could not end a unit of work's savepoint; its group is rolled back", metadata: ["error": "\(error)"])
            if !handle.isAutocommit { try? handle.execute("ROLLBACK") }
        }
        let group = state.withLockedValue { $0.group }
        if handle.isAutocommit {
            // SQLite ended the group's transaction itself (it does after some I/O errors): nothing of the
            // group was kept, and every unit of it must say so.
            state.withLockedValue { $0.group = nil }
            // 4 is SQLITE_ABORT.
            group?.complete(
                .failure(SQLiteStorageError(status: 4, message: "the transaction was rolled back; nothing in it was kept"))
            )
            release()
            return (outcome, group)
        }
        group?.size += 1
        leave()
        return (outcome, group)
    }

    /// Opens the group's transaction if this unit is the first of a group, then the unit's savepoint.
    private func startUnit() throws -> UInt64 {
        let (closed, group, unit) = state.withLockedValue { state in
            defer { state.nextUnit += 1 }
            return (state.closed, state.group, state.nextUnit)
        }
        // 21 is SQLITE_MISUSE.
        guard !closed else { throw SQLiteStorageError(status: 21, message: "the database is closed") }
        if group == nil {
            do {
                try handle.execute("BEGIN IMMEDIATE")
            } catch let error as SQLiteStorageError where error.status & 0xFF == 5 {
                // SQLITE_BUSY after the busy timeout: another process (`bioauth admin purge`, say) has held the write
                // lock for seconds. The request is refused as the server being too busy, never as its own failure.
                logger.warning("the database file stayed locked by another process; unit of work refused", metadata: ["error": "\(error)"])
                throw APIError.databaseTooBusy
            }
            state.withLockedValue { $0.group = CommitGroup() }
        }
        try handle.execute("SAVEPOINT bioauth_unit")
        handle.setUnit(unit)
        return unit
    }

    /// Gives up the connection, committing the open group first when no other unit is arriving or the group is
    /// full.
    private func leave() {
        let commitNow = state.withLockedValue { state in
            guard let group = state.group else { return false }
            return state.arriving == 0 || group.size >= Self.maximumGroupSize
        }
        if commitNow { _ = commitGroup() }
        release()
    }

    /// Commits the open group (if any) and tells its units how it went.
    private func commitGroup() -> Result<Void, any Error> {
        guard let group = state.withLockedValue({ $0.group }) else { return .success(()) }
        let result: Result<Void, any Error>
        do {
            try handle.execute("COMMIT")
            result = .success(())
        } catch {
            if !handle.isAutocommit { try? handle.execute("ROLLBACK") }
            logger.error("a group commit failed; none of its units was kept", metadata: ["error": "\(error)"])
            result = .failure(error)
        }
        state.withLockedValue { $0.group = nil }
        group.complete(result)
        return result
    }

    // MARK: The connection's lock

    /// Waits for the connection; first come, first served. The caller is no longer arriving once it holds it.
    private func acquire() async {
        let free = state.withLockedValue { state in
            guard !state.held else { return false }
            state.held = true
            state.arriving -= 1
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
                state.arriving -= 1
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
            state.arriving -= 1
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// How many are waiting for the connection (tests).
    var waitingCount: Int { state.withLockedValue { $0.waiting.count } }
}

/// The units of work sharing one SQLite transaction, and the outcome of its commit once known.
private final class CommitGroup: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NIOLock()
    private var result: Result<Void, any Error>?
    private var waiting: [CheckedContinuation<Void, any Error>] = []
    /// Units of work done in the group (only the connection's holder touches it).
    var size = 0

    /// Records the commit's outcome and resumes those waiting for it.
    func complete(_ result: Result<Void, any Error>) {
        let waiting = lock.withLock {
            self.result = result
            defer { self.waiting = [] }
            return self.waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }

    /// Returns once the group is committed; throws when its commit failed.
    func committed() async throws {
        if let result = lock.withLock({ self.result }) { return try result.get() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result = lock.withLock { () -> Result<Void, any Error>? in
                if let result = self.result { return result }
                waiting.append(continuation)
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
