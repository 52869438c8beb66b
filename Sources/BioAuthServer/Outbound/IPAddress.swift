#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, as its bytes (4 or 16, network order).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's bytes: 4 for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Whether it is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// An address from its 4 or 16 bytes; nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Reads the standard text forms only: IPv4 as four decimal numbers (`10.0.0.1`), IPv6 as RFC 4291 writes it
    /// (`::1`, `::ffff:10.0.0.1`), with or without brackets. Nil for anything else, the shortened and numeric IPv4 forms
    /// that some resolvers accept (`2130706433`, `127.1`, `0x7f.0.0.1`) and IPv6 zone ids (`fe80::1%eth0`) among them.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(text), &address) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &address) { Array($0) }
        } else {
            // inet_pton takes only the dotted-decimal form; leading zeros (octal to some parsers) are refused here too.
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4,
                parts.allSatisfy({ part in
                    (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                        && (part.count == 1 || !part.hasPrefix("0"))
                })
            else { return nil }
            var address = in_addr()
            guard inet_pton(AF_INET, String(text), &address) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &address) { Array($0) }
        }
    }

    /// The standard text form (`10.0.0.1`, `::1`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var copy = bytes
        let written = copy.withUnsafeMutableBytes { raw in
            inet_ntop(isIPv4 ? AF_INET : AF_INET6, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A range of addresses written as CIDR (`10.0.0.0/8`, `fc00::/7`), or one address (`/32` or `/128`).
public struct IPRange: Sendable, Hashable, CustomStringConvertible {
    /// The range's first address (its host bits are zero).
    public let network: IPAddress
    /// How many leading bits every address in the range shares with ``network``.
    public let prefixLength: Int

    /// Reads `10.0.0.0/8`, `fc00::/7` or one address (`192.0.2.7`). Nil when the address does not read, the prefix is
    /// out of range, or host bits are set (`10.0.0.1/8`: write `10.0.0.0/8`).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isNumber) else { return nil }
            length = given
        }
        guard Self.masked(address.bytes, to: length) == address.bytes else { return nil }
        self.network = address
        self.prefixLength = length
    }

    /// Whether `address` is in the range (an IPv4 address is never in an IPv6 range, nor the other way round).
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, to: prefixLength) == network.bytes
    }

    /// `10.0.0.0/8`.
    public var description: String { "\(network)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8.max >> kept)
        }
    }
}
