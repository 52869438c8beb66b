import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where the server gets random bytes for tokens, challenges and row identifiers. Injected, so tests can make
/// them predictable when they need to.
public protocol RandomSource: Sendable {
    /// `count` random bytes.
    func bytes(_ count: Int) -> Data
}

/// The system's cryptographically secure generator.
public struct SystemRandomSource: RandomSource {
    /// The system's generator.
    public init() {}

    public func bytes(_ count: Int) -> Data {
        var data = Data(count: max(0, count))
        data.withUnsafeMutableBytes { buffer in
            var filled = 0
            while filled < buffer.count {
                let chunk = min(256, buffer.count - filled)  // getentropy's most per call
                #if canImport(Glibc)
                // One system call for up to 256 bytes (Swift's generator makes one per 8).
                if let start = buffer.baseAddress, getentropy(start + filled, chunk) == 0 {
                    filled += chunk
                    continue
                }
                #endif
                // Elsewhere, or if the call fails: Swift's generator, 8 bytes at a time.
                var generator = SystemRandomNumberGenerator()
                let end = filled + chunk
                while filled < end {
                    withUnsafeBytes(of: generator.next()) { word in
                        for byte in word where filled < end {
                            buffer[filled] = byte
                            filled += 1
                        }
                    }
                }
            }
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
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
        return uuid.uuidString.lowercased()
    }
}
