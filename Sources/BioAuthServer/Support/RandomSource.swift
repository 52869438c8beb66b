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

extension RandomSource {
    /// A new identifier for a row (account, device, session, challenge, payment, audit event): a random
    /// (version 4) UUID in lowercase, made from 16 bytes of this source.
    ///
    /// Foundation's `UUID()` opens and closes `/dev/urandom` for every identifier on Linux; this takes the bytes
    /// from the source the server already uses for secrets.
    func newID() -> String {
        var bytes = [UInt8](bytes(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return uuid.uuidString.lowercased()
    }
}
