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
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
