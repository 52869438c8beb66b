import Foundation

/// Where logic reads the time. Injected everywhere, so expiry, lockout and grace periods are tested
/// without sleeping.
public protocol WallClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's clock.
public struct SystemClock: WallClock {
    /// The system's clock.
    public init() {}
    public var now: Date { Date() }
}
