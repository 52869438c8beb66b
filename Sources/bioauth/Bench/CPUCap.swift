import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Lets processes run only a share of the time each, by continuing and stopping them (`SIGCONT`, `SIGSTOP`) on a fixed
/// period, as `cpulimit` does, for `bioauth bench --server-cpu-share`. A process with several threads can use several
/// cores during its turn, so its CPU is at most the share times the cores it uses; the bench reports what it used. On a machine with few cores this makes the server
/// instances, not the database or the load generator, what limits throughput, so that two instances on one database can
/// be compared with one as if each had a machine of its own (docs/PERFORMANCE.md).
///
/// Each process runs for `share × period` of every period. Their turns are spread evenly over the period (the second
/// process's turn starts half a period after the first's), so two capped instances overlap as little as their shares
/// allow, as two machines would not contend for one core. A process stopped in the middle of a request holds what it
/// holds (a database connection, its rows' locks) until its next turn: only its own requests wait on those.
///
/// Linux only. The pacing thread sleeps to absolute times, so a late wake-up shortens the next phase rather than
/// drifting; `cpuSeconds` of each process says what it really used.
final class CPUCap: @unchecked Sendable {
    /// One turn per period: 20 ms, so a turn is several requests long at a share of a quarter of a core.
    static let period: Double = 0.020

    private let pids: [Int32]
    private let share: Double
    private let lock = NSLock()
    private var stopping = false
    private let ended = DispatchSemaphore(value: 0)

    /// Starts letting each of `pids` run `share` (more than 0, at most 1) of the time.
    init(pids: [Int32], share: Double) {
        precondition(share > 0 && share <= 1 && !pids.isEmpty)
        self.pids = pids
        self.share = share
        let thread = Thread { [self] in pace() }
        thread.name = "bench-cpu-cap"
        thread.start()
    }

    /// Stops pacing and continues every process; returns once the pacing thread is done.
    func stop() {
        let first = lock.withLock {
            guard !stopping else { return false }
            stopping = true
            return true
        }
        if first { ended.wait() }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// The pacing loop: each period, every process's turn starts at `index / count` of the period and lasts `share` of it.
    private func pace() {
        #if canImport(Glibc)
        // The turns are in the order they happen: (offset into the period, process, continue or stop).
        var events: [(offset: Double, pid: Int32, signal: Int32)] = []
        for (index, pid) in pids.enumerated() {
            let start = Double(index) / Double(pids.count) * Self.period
            events.append((start, pid, SIGCONT))
            if share < 1 { events.append(((start + share * Self.period).truncatingRemainder(dividingBy: Self.period), pid, SIGSTOP)) }
        }
        events.sort { $0.offset < $1.offset }
        var origin = timespec()
        clock_gettime(CLOCK_MONOTONIC, &origin)
        let base = Double(origin.tv_sec) + Double(origin.tv_nsec) / 1e9
        var cycle = 0.0
        while !isStopping {
            for event in events {
                var due = timespec()
                let at = base + cycle * Self.period + event.offset
                due.tv_sec = Int(at)
                due.tv_nsec = Int((at - Double(Int(at))) * 1e9)
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
                kill(event.pid, event.signal)
            }
            cycle += 1
        }
        for pid in pids { kill(pid, SIGCONT) }
        #endif
        ended.signal()
    }
}
