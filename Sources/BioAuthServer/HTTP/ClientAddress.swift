import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The address a request came from, as rate limits count it: the connection's peer, or — when the peer is one of
/// the deployment's trusted proxies — the nearest address in `X-Forwarded-For` that is not a trusted proxy.
///
/// IPv4 addresses count one by one; IPv6 addresses by their /64 prefix, the block one customer is given (counting
/// single IPv6 addresses would let one client have 2^64 buckets).
enum ClientAddress {
    /// What a request says about its client, kept in its ``RequestScope`` by ``ClientAddressMiddleware``; resolved
    /// (``Caller/address``) only when a rule counts or records the client, not on every request.
    struct Origin: Sendable {
        let peer: SocketAddress?
        let forwardedFor: [String]
        let trustedProxies: Set<String>
        /// The request's `User-Agent`, as sent.
        var userAgent: String? = nil
    }

    /// The bucket key of `address`: dotted IPv4, or `v6:` and the hex of the first 8 bytes.
    static func key(_ address: SocketAddress) -> String? {
        switch address {
        case .v4: return address.ipAddress
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0.prefix(16)) }
            // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is that IPv4 address.
            if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12...].map(String.init).joined(separator: ".")
            }
            return "v6:" + bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":")
        case .unixDomainSocket: return nil
        }
    }

    /// The bucket key of a textual IP address (from `X-Forwarded-For`), or `nil` if it is not one.
    static func key(_ text: Substring) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let address = try? SocketAddress(ipAddress: trimmed, port: 0) else { return nil }
        return key(address)
    }

    /// The client of a request that came from `peer` with these `X-Forwarded-For` values.
    static func resolve(peer: SocketAddress?, forwardedFor: [String], trustedProxies: Set<String>) -> String? {
        guard let peer, let peerKey = key(peer) else { return nil }
        guard trustedProxies.contains(peerKey) else { return peerKey }
        // Right to left: each hop appended the address it saw; the first one that is not our proxy is the client.
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }
        for hop in hops.reversed() {
            guard let hopKey = key(hop) else { return peerKey }  // garbage: trust nothing further left
            if !trustedProxies.contains(hopKey) { return hopKey }
        }
        return peerKey
    }
}

/// A request context that knows the connection's peer address.
struct BioAuthRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}

/// Puts the request's ``ClientAddress/Origin`` into its ``RequestScope`` for the rest of the request: a header read, no
/// parsing (that waits for ``Caller/address``).
struct ClientAddressMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    /// Bucket keys of the proxies whose `X-Forwarded-For` is believed.
    let trustedProxies: Set<String>

    init(trustedProxies: [String]) {
        self.trustedProxies = Set(trustedProxies.compactMap { ClientAddress.key($0[...]) })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The header counts only behind a trusted proxy; without any, it is not even read.
        let forwarded = trustedProxies.isEmpty ? [] : request.headers[values: forwardedForField]
        let origin = ClientAddress.Origin(
            peer: context.remoteAddress,
            forwardedFor: forwarded,
            trustedProxies: trustedProxies,
            userAgent: request.headers[.userAgent]
        )
        return try await RequestScope.with(\.origin, origin) { try await next(request, context) }
    }
}

private let forwardedForField = HTTPField.Name("X-Forwarded-For")!
