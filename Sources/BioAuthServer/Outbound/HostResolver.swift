import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves a host name to the addresses a connection could go to.
public protocol HostResolver: Sendable {
    /// Every address `name` resolves to now; empty when the name does not exist. Throws when the resolver cannot
    /// answer (no network, a server failure).
    func addresses(of name: String) async throws -> [IPAddress]
}

/// The resolver cannot answer for a name (as distinct from answering that it does not exist).
public struct HostResolutionError: Error, CustomStringConvertible {
    /// The resolver's own words.
    public let reason: String
    public var description: String { "name resolution failed: \(reason)" }
}

/// The system's resolver (`getaddrinfo`, on NIO's thread pool so that no event loop or task thread waits on it).
public struct SystemHostResolver: HostResolver {
    public init() {}

    public func addresses(of name: String) async throws -> [IPAddress] {
        try await NIOThreadPool.singleton.runIfActive { try Self.resolve(name) }
    }

    private static func resolve(_ name: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        switch status {
        case 0: break
        case EAI_NONAME: return []
        default:
            #if canImport(Glibc)
            // EAI_NODATA (the name exists but has no address), which glibc declares only under _GNU_SOURCE.
            if status == -5 { return [] }
            #endif
            throw HostResolutionError(reason: String(cString: gai_strerror(status)))
        }
        var found: [IPAddress] = []
        var next = list
        while let entry = next {
            if let socketAddress = entry.pointee.ai_addr {
                switch Int32(entry.pointee.ai_family) {
                case AF_INET:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                    }
                    if let address = IPAddress(bytes: bytes), !found.contains(address) { found.append(address) }
                case AF_INET6:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    if let address = IPAddress(bytes: bytes), !found.contains(address) { found.append(address) }
                default: break
                }
            }
            next = entry.pointee.ai_next
        }
        return found
    }
}

/// A resolver that answers from a fixed table and knows no other name: for tests, which must not depend on the
/// machine's DNS. `localhost` resolves to `127.0.0.1` and `::1` unless the table says otherwise.
public struct StaticHostResolver: HostResolver {
    /// The answers, by lowercased name.
    public var table: [String: [IPAddress]]

    /// A resolver answering `table` (names in any case).
    public init(_ table: [String: [String]] = [:]) {
        var answers: [String: [IPAddress]] = ["localhost": [IPAddress("127.0.0.1")!, IPAddress("::1")!]]
        for (name, addresses) in table { answers[name.lowercased()] = addresses.compactMap(IPAddress.init) }
        self.table = answers
    }

    public func addresses(of name: String) async throws -> [IPAddress] { table[name.lowercased()] ?? [] }
}
