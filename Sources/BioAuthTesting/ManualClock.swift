import BioAuthCore
import Foundation

/// A clock that moves only when told, for testing expiry, lockout and grace periods without sleeping.
public final class ManualClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// A clock showing `start` (2026-01-01T00:00:00Z by default).
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) { self.current = start }

    /// The time the test set.
    public var now: Date { lock.withLock { current } }

    /// Moves the clock by `seconds` (negative moves it back, like a user changing the device's time).
    public func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { lock.withLock { current = date } }
}
