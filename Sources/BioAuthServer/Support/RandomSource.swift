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
    /// A new row identifier made at `date`: a time-ordered (version 7, RFC 9562) UUID in lowercase — 48 bits of
    /// milliseconds since 1970, then 74 random bits from this source. See ``BioAuthService/newID()`` for where it
    /// is used.
    func newTimeOrderedID(at date: Date) -> String {
        var bytes = [UInt8](bytes(16))
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        return Self.uuidString(bytes, version: 7)
    }

    /// A new row identifier: a random (version 4) UUID in lowercase, 122 random bits from this source.
    func newRandomID() -> String { Self.uuidString([UInt8](bytes(16)), version: 4) }

    /// The lowercase UUID of 16 bytes, with its version and the RFC 9562 variant set. Foundation's `UUID()` is not
    /// used for identifiers: it opens and closes `/dev/urandom` for every one on Linux.
    private static func uuidString(_ bytes: [UInt8], version: UInt8) -> String {
        var bytes = bytes
        bytes[6] = (bytes[6] & 0x0F) | (version << 4)
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return uuid.uuidString.lowercased()
    }
}
