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
    /// A new identifier for a row (account, device, session, challenge, payment, audit event) made at `date`: a
    /// time-ordered (version 7, RFC 9562) UUID in lowercase — 48 bits of milliseconds since 1970, then 74 random
    /// bits from this source.
    ///
    /// Time-ordered, so that each new row's entry goes at the end of its table's primary-key index instead of onto
    /// a random page: a commit writes fewer pages, and the pages new rows go to stay in the cache as tables grow.
    /// The random part keeps identifiers unguessable; none of them is a secret (every lookup is also by account,
    /// or needs a signature), and each reveals only when it was made, which the API shows anyway. Foundation's
    /// `UUID()` is not used: it opens and closes `/dev/urandom` for every identifier on Linux.
    func newID(at date: Date) -> String {
        var bytes = [UInt8](bytes(16))
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70  // version 7
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return uuid.uuidString.lowercased()
    }
}
