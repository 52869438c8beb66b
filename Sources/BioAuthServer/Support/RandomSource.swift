import Foundation

/// Where the server gets random bytes for tokens and challenges. Injected, so tests can make them
/// predictable when they need to.
public protocol RandomSource: Sendable {
    /// `count` random bytes.
    func bytes(_ count: Int) -> Data
}

/// The system's cryptographically secure generator.
public struct SystemRandomSource: RandomSource {
    /// The system's generator.
    public init() {}

    public func bytes(_ count: Int) -> Data {
        // Eight bytes per call to the system's generator (one system call each on Linux), not one.
        var generator = SystemRandomNumberGenerator()
        var data = Data(capacity: count)
        while data.count < count {
            withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0.prefix(count - data.count)) }
        }
        return data
    }
}
