/// Where the server may send requests of its own (today: webhook deliveries), and how it resolves names.
///
/// By default only public destinations: a name or address that reaches loopback, a private or link-local network, or any
/// other range that is not globally reachable is refused (`OutboundAddressRules`), and so is a name under a suffix
/// that only a local network resolves (`.internal`, `.local`, `.localhost`, …) or a name of one label (`vault`, which
/// the resolver would complete with the machine's search domains). A deployment that delivers to a receiver of its own
/// network names it in ``allowed``.
public struct OutboundPolicy: Sendable {
    /// Destinations allowed although not public: host names (exactly, any case: `hooks.bank.internal`) and addresses
    /// or CIDR ranges (`127.0.0.1`, `10.20.0.0/16`, `fd00::/8`). A name listed here is trusted with whatever it resolves
    /// to; an address or range allows exactly those addresses, whatever name led to them. Empty by default.
    public var allowed: [String] = []
    /// Resolves names to addresses; the system's resolver by default.
    public var resolver: any HostResolver = SystemHostResolver()

    /// The defaults: public destinations only, resolved by the system.
    public init() {}

    /// The host names in ``allowed``, lowercased, without a trailing dot.
    var allowedNames: Set<String> {
        Set(allowed.filter { IPRange($0) == nil }.map { OutboundHost.normalized($0) })
    }

    /// The addresses and ranges in ``allowed``.
    var allowedRanges: [IPRange] { allowed.compactMap(IPRange.init) }

    /// Checks the list; the message names the entry that does not read.
    func validate() throws {
        for entry in allowed where IPRange(entry) == nil {
            let name = OutboundHost.normalized(entry)
            guard entry.contains("/") == false, OutboundHost.isValidName(name) else {
                throw ConfigurationError(
                    message: "outbound allow list: \(entry) is neither a host name, an address nor a CIDR range with its host bits zero"
                )
            }
        }
    }
}

/// The address ranges a request of the server's own never reaches unless ``OutboundPolicy/allowed`` names them: every
/// range of the IANA special-purpose registries that is not globally reachable, the ranges that embed an IPv4 address in
/// an IPv6 one (which would smuggle a private IPv4 address past an IPv6 check), multicast and the reserved ranges.
enum OutboundAddressRules {
    /// Each refused range with the word the error and the log use for it.
    static let refused: [(range: IPRange, kind: String)] = [
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (CGNAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::ffff:0:0/96", "IPv4-mapped"),
        ("::/96", "IPv4-compatible"),
        ("64:ff9b::/96", "NAT64"),
        ("64:ff9b:1::/48", "NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/23", "IETF protocol assignments"),
        ("2001:db8::/32", "documentation"),
        ("2002::/16", "6to4"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "unique-local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    ].map { (IPRange($0.0)!, $0.1) }

    /// Why `address` is refused (`"loopback"`, `"private"`, …), or nil when it is public.
    static func refusal(of address: IPAddress) -> String? {
        refused.first { $0.range.contains(address) }?.kind
    }
}

/// How the server reads the host of a URL it is asked to send to.
enum OutboundHost: Equatable {
    case address(IPAddress)
    case name(String)

    /// Suffixes that only a local network resolves (RFC 6761, RFC 6762 appendix G, RFC 8375, ICANN's `.internal`).
    static let localSuffixes = ["localhost", "local", "internal", "intranet", "private", "corp", "home", "lan", "home.arpa"]

    /// Lowercased, without one trailing dot (`Vault.Internal.` is `vault.internal`).
    static func normalized(_ host: String) -> String {
        let lower = host.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    /// Whether `name` is a DNS name: labels of letters, digits, `-` and `_`, 1 to 63 bytes each, at most 253 in all.
    static func isValidName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return !name.isEmpty && name.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count)
                    && label.utf8.allSatisfy { byte in
                        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
                    }
            }
    }

    /// Reads a URL's host: an address in its standard form, or a DNS name. Nil for anything else: a name whose last label
    /// is a number (`2130706433`, `127.1`, `0x7f.1`, which resolvers read as IPv4 addresses in forms this check will not
    /// guess at), a zone id, or characters a DNS name does not have.
    init?(_ host: String) {
        if let address = IPAddress(host) {
            self = .address(address)
            return
        }
        let name = Self.normalized(host)
        guard Self.isValidName(name), let last = name.split(separator: ".").last else { return nil }
        if last.allSatisfy(\.isNumber) || last.hasPrefix("0x") { return nil }
        self = .name(name)
    }

    /// Why the name is refused before it is resolved: it has one label, or it ends in a local suffix.
    var nameRefusal: String? {
        guard case .name(let name) = self else { return nil }
        if !name.contains(".") { return "a name of one label (completed by the local resolver)" }
        for suffix in Self.localSuffixes where name == suffix || name.hasSuffix("." + suffix) {
            return "a name under .\(suffix) (resolved only by a local network)"
        }
        return nil
    }
}
