/// One operation's latencies in consecutive windows of the measured phase (`bioauth bench --series SECONDS`), so that
/// one run shows how something that happens during it (a retention purge, a vacuum, a second instance starting) moves
/// throughput and the tail, window by window.
///
/// Every latency is kept (4 bytes each) until the report, so the percentiles are exact, not bucketed: a ten-minute run
/// at 2 000 operations a second holds about 5 MB.
struct LatencySeries: Sendable {
    /// Window length in seconds.
    let seconds: Double
    /// Per window index (0: the window that starts the measured phase): each success's latency in microseconds, and
    /// the failures.
    private(set) var windows: [Int: Window] = [:]

    struct Window: Sendable {
        var micros: [UInt32] = []
        var errors = 0
    }

    /// One window's figures, for the report.
    struct Row: Codable, Equatable {
        /// Seconds from the start of the measured phase to the start of this window.
        var fromSeconds: Double
        var ok: Int
        var perSecond: Double
        var p50Ms: Double
        var p99Ms: Double
        var maxMs: Double
        var errors: Int
    }

    init(seconds: Double) {
        precondition(seconds > 0, "a window is a positive number of seconds")
        self.seconds = seconds
    }

    /// Counts one operation that began (or, open loop, was due) `offset` seconds into the measured phase.
    mutating func add(offset: Double, micros: UInt64, failed: Bool) {
        let index = Int((max(0, offset) / seconds).rounded(.down))
        if failed {
            windows[index, default: Window()].errors += 1
        } else {
            windows[index, default: Window()].micros.append(UInt32(clamping: micros))
        }
    }

    /// Adds another worker's windows to these.
    mutating func merge(_ other: LatencySeries) {
        for (index, window) in other.windows {
            windows[index, default: Window()].micros += window.micros
            windows[index, default: Window()].errors += window.errors
        }
    }

    /// Every window from the first to the last that saw an operation, in order; a window in between with none is a row
    /// of zeros (a stall shows as one). `measuredSeconds` shortens the last window's rate when the phase ended inside it.
    func rows(measuredSeconds: Double) -> [Row] {
        guard let last = windows.keys.max() else { return [] }
        return (0...last).map { index in
            let window = windows[index] ?? Window()
            let sorted = window.micros.sorted()
            let from = Double(index) * seconds
            let length = min(seconds, max(measuredSeconds - from, 0))
            return Row(
                fromSeconds: from,
                ok: sorted.count,
                perSecond: length > 0 ? Double(sorted.count) / length : 0,
                p50Ms: Self.percentile(50, of: sorted),
                p99Ms: Self.percentile(99, of: sorted),
                maxMs: sorted.last.map { Double($0) / 1000 } ?? 0,
                errors: window.errors
            )
        }
    }

    /// The nearest-rank percentile of sorted microseconds, in milliseconds (0 for none): the smallest latency that at
    /// least `p` % of them do not exceed.
    static func percentile(_ p: Double, of sorted: [UInt32]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return Double(sorted[min(max(rank, 1), sorted.count) - 1]) / 1000
    }
}
