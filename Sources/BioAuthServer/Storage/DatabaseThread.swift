import Foundation

#if canImport(Darwin)
import Darwin
#endif

/// A thread of the database's own, on which ``SQLiteDatabaseExecutor`` runs its units of work (as a Swift task
/// executor). Units then follow one another without waiting behind the concurrency pool's queue of HTTP work,
/// and calls that wait — for the disk at commit, for another process's lock — block no pool thread.
///
/// The thread runs while there are jobs and for a moment after; ``stop()`` lets it end once its queue is empty.
/// A job that arrives after that starts it again, so a late job is never stranded.
final class DatabaseThread: @unchecked Sendable {
    private let name: String
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var running = false
    private var stopped = false

    init(name: String) { self.name = name }

    /// Queues `job`; starts the thread when it is not running.
    func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        let start = !running
        running = true
        condition.signal()
        condition.unlock()
        if start { launch() }
    }

    /// Lets the thread end once no job is queued.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func launch() {
        let thread = Thread { [self] in
            Self.nameCurrentThread(name)
            loop()
        }
        thread.start()
    }

    /// Names the calling thread so that the system sees it (`top -H`, `perf`, `/proc/…/task/…/comm`; the bench reads
    /// its CPU time by this name). Foundation's `Thread.name`, set from inside a thread that has just started,
    /// sometimes does not reach the system on Linux (seen under load: the thread kept the name it inherited from the
    /// thread that started it), so on Linux the name is also written where the kernel keeps it (at most 15 bytes).
    static func nameCurrentThread(_ name: String) {
        Thread.current.name = name
        #if os(Linux)
        if let comm = FileHandle(forWritingAtPath: "/proc/thread-self/comm") {
            comm.write(Data(name.utf8.prefix(15)))
            try? comm.close()
        }
        #elseif canImport(Darwin)
        _ = pthread_setname_np(name)
        #endif
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped {
                // Idle for a while: the thread ends, and the next job starts another.
                if !condition.wait(until: Date(timeIntervalSinceNow: 30)) && jobs.isEmpty { break }
            }
            if jobs.isEmpty {
                running = false
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { runJob(job) }
        }
    }

    private func runJob(_ job: UnownedJob) {
        // Jobs reach this thread only through task executor preference, which exists exactly where this holds.
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension DatabaseThread: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) { enqueue(UnownedJob(job)) }
}

extension DatabaseThread {
    /// Runs `operation` with this thread as its task's preferred executor: its non-isolated async code runs here.
    /// Where task executors do not exist (Apple platforms before macOS 15 / iOS 18) it runs where it is.
    func run<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
            return try await withTaskExecutorPreference(self) { try await operation() }
        }
        return try await operation()
    }
}
