import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// CPU time, memory and open files of a process (this one or another), from Linux's `/proc`; `nil` where there is
/// none. `bioauth bench` reads the server's; the server's metrics read its own.
public enum ProcessStats {
    /// User and system CPU time used so far, in seconds.
    public static func cpuSeconds(pid: Int32? = nil) -> Double? {
        cpuSeconds(statFile: "/proc/\(pid.map(String.init) ?? "self")/stat")
    }

    /// When this process started (Linux: its start time in clock ticks after boot, plus the boot time).
    public static func startTime() -> Date? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let close = stat.lastIndex(of: ")"),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let bootLine = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = Double(bootLine.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces))
        else { return nil }
        // starttime is field 22 of proc(5): the 20th after the command name.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let started = Double(fields[19]) else { return nil }
        #if canImport(Glibc)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        #else
        let ticks = 100.0
        #endif
        return Date(timeIntervalSince1970: boot + started / max(1, ticks))
    }

    /// User and system CPU time from a process's or thread's `stat` file, in seconds.
    private static func cpuSeconds(statFile: String) -> Double? {
        // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the
        // 12th and 13th (fields 14 and 15 of proc(5)), in clock ticks.
        guard let stat = try? String(contentsOfFile: statFile, encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        #if canImport(Glibc)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        #else
        let ticks = 100.0
        #endif
        return (user + system) / max(1, ticks)
    }

    /// CPU time used so far by the threads of a process named `name` (as `/proc/…/task/…/comm` shows them), in
    /// seconds; `nil` when the process has no such thread.
    public static func threadCPUSeconds(named name: String, pid: Int32? = nil) -> Double? {
        cpuSeconds(under: "/proc/\(pid.map(String.init) ?? "self")/task", named: name)
    }

    /// CPU time used so far by every process named `name` (`/proc/PID/comm`: `postgres` for a PostgreSQL server and its
    /// backends), in seconds; `nil` when there is none. Processes that ended meanwhile are not counted, so a difference
    /// of two readings undercounts by what short-lived ones used.
    public static func cpuSeconds(ofProcessesNamed name: String) -> Double? {
        cpuSeconds(under: "/proc", named: name)
    }

    /// The summed CPU time of the entries of `folder` (`/proc` or a process's `task`) whose numeric name holds a `comm` of
    /// `name`; `nil` when none does.
    private static func cpuSeconds(under folder: String, named name: String) -> Double? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        var total: Double?
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let comm = try? String(contentsOfFile: "\(folder)/\(entry)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name,
                let seconds = cpuSeconds(statFile: "\(folder)/\(entry)/stat")
            else { continue }
            total = (total ?? 0) + seconds
        }
        return total
    }

    /// Resident memory now (VmRSS), in bytes.
    public static func residentBytes(pid: Int32? = nil) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// File descriptors open now (sockets, the database, log files).
    public static func openFileDescriptors(pid: Int32? = nil) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid.map(String.init) ?? "self")/fd"))?.count
    }
}
