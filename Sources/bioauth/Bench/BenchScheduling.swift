import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Crypto
import Foundation
import Histogram
import Logging
import OpenAPIAsyncHTTPClient

/// When each operation of an open-loop run is due: `start + i / rate` for the i-th, handed out in order.
final class OpenLoopSchedule: @unchecked Sendable {
    private let lock = NSLock()
    private let start: ContinuousClock.Instant
    private let rate: Double
    private var issued: Int64 = 0

    init(start: ContinuousClock.Instant, rate: Double) {
        self.start = start
        self.rate = rate
    }

    /// The next operation's due time, or nil once it would be at or after `end`.
    func next(before end: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        lock.withLock {
            // From the count, not by adding a rounded interval: no drift however long the run.
            let due = start + .nanoseconds(Int64((Double(issued) * 1e9 / rate).rounded()))
            guard due < end else { return nil }
            issued += 1
            return due
        }
    }
}

/// Successful operations so far, for the progress line.
/// The measured operations of a counted run, handed out one at a time to whichever worker asks.
final class OperationSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var left: Int
    init(count: Int) { left = count }
    /// Takes one; false when none is left.
    func take() -> Bool {
        lock.withLock {
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }
    var exhausted: Bool { lock.withLock { left == 0 } }
}

/// Set once, when every worker of a run is done; waited for by what measures the run.
final class Finished: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func set() { lock.withLock { done = true } }
    var value: Bool { lock.withLock { done } }
    /// Returns once ``set()`` was called (checking every 10 ms).
    func wait() async {
        while !value { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

final class ProgressCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A benchmark that cannot run, with the reason.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
