import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The server will not send a request to this destination (``OutboundPolicy``).
struct OutboundRefusal: Error, CustomStringConvertible {
    /// The host as the URL names it.
    let host: String
    /// Why: `"127.0.0.1 is loopback"`, `"a name under .internal (resolved only by a local network)"`, ….
    let reason: String
    var description: String { "\(host) is not an allowed destination: \(reason)" }
}

/// Every HTTP request the server makes of its own goes through here, so that a URL a client gave (a webhook endpoint)
/// cannot make the server reach into the network it runs in (server-side request forgery).
///
/// A destination is checked twice: when its URL is accepted (``check(_:)``, so the client hears at once), and again for
/// every request (``post(to:headers:body:timeout:)``), on the addresses the name resolves to at that moment. The
/// connection then goes to the address that was checked, not to whatever a second lookup answers, so a name that
/// resolves to a public address at registration and to `127.0.0.1` afterwards (DNS rebinding) is refused, not
/// followed. TLS still verifies the certificate against the URL's host name. Redirects are never followed.
struct OutboundHTTP: Sendable {
    let resolver: any HostResolver
    /// The allow list, read once: names, and addresses or ranges.
    let allowedNames: Set<String>
    let allowedRanges: [IPRange]

    init(policy: OutboundPolicy) {
        resolver = policy.resolver
        allowedNames = policy.allowedNames
        allowedRanges = policy.allowedRanges
    }

    /// A checked destination: the host as the URL names it, and the address to connect to.
    struct Destination: Sendable, Equatable {
        /// The URL's host as the HTTP client reads it (no brackets).
        var host: String
        /// The address the connection goes to; nil when a name did not resolve (accepted at registration only).
        var address: IPAddress?
    }

    /// Checks the URL's destination as it is registered: its port is 1-65535, its host an address or a DNS name that
    /// is public (or allowed), and every address the name resolves to now is public (or allowed). A name that does not
    /// resolve yet, or when the resolver cannot answer, is accepted: every request checks again.
    ///
    /// - Throws: ``OutboundRefusal``.
    @discardableResult
    func check(_ url: String) async throws -> Destination {
        try await destination(of: url, lookupLimit: Self.registrationLookupLimit, mustResolve: false)
    }

    /// POSTs `body` to `url` after checking its destination again and connects to the address it checked; reads and drops
    /// at most 64 KiB of the answer. `timeout` bounds the name's lookup, the connection and the answer, each. Returns the
    /// answer's status.
    ///
    /// - Throws: ``OutboundRefusal`` (then nothing was sent), ``HostResolutionError``, or the HTTP client's error.
    func post(to url: String, headers: HTTPHeaders, body: Data, timeout: TimeInterval) async throws -> Int {
        let milliseconds = Int64(timeout * 1000)
        let limit = TimeAmount.milliseconds(milliseconds)
        let destination = try await destination(of: url, lookupLimit: .milliseconds(milliseconds), mustResolve: true)
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        // A receiver that refuses connections fails the attempt at once (it is retried on the caller's schedule).
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: limit, read: limit)
        if let address = destination.address, IPAddress(destination.host) == nil {
            // Connect to the checked address; the URL's name still goes in Host, in SNI and in the certificate check.
            configuration.dnsOverride = [destination.host: address.description]
        }
        // One client per request: its connection is to the address checked for this request, never one kept from before.
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers = headers
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await client.execute(request, timeout: limit)
            var read = 0
            for try await chunk in response.body {
                read += chunk.readableBytes
                if read > 65_536 { break }
            }
            try? await client.shutdown()
            return Int(response.status.code)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// How long a registration waits for its name to resolve.
    static let registrationLookupLimit = Duration.seconds(2)

    /// What `resolver` answers for `name` within `limit`; nil when it cannot answer (a failure or no answer in time; the
    /// lookup is then left to finish on its own: the system's cannot be cancelled).
    static func resolve(_ name: String, with resolver: any HostResolver, within limit: Duration) async -> [IPAddress]? {
        let answer = NIOLockedValueBox<(settled: Bool, continuation: CheckedContinuation<[IPAddress]?, Never>?)>((false, nil))
        @Sendable func settle(_ value: [IPAddress]?) {
            let waiting = answer.withLockedValue { state -> CheckedContinuation<[IPAddress]?, Never>? in
                guard !state.settled else { return nil }
                state.settled = true
                return state.continuation
            }
            waiting?.resume(returning: value)
        }
        return await withCheckedContinuation { continuation in
            answer.withLockedValue { $0.continuation = continuation }
            let timer = Task {
                try? await Task.sleep(for: limit)
                settle(nil)
            }
            Task {
                settle(try? await resolver.addresses(of: name))
                timer.cancel()
            }
        }
    }

    private func destination(of url: String, lookupLimit: Duration, mustResolve: Bool) async throws -> Destination {
        guard let parsed = URL(string: url), let urlHost = parsed.host, !urlHost.isEmpty else {
            throw OutboundRefusal(host: url, reason: "the URL has no host")
        }
        let host = urlHost.hasPrefix("[") && urlHost.hasSuffix("]") ? String(urlHost.dropFirst().dropLast()) : urlHost
        if let port = parsed.port, !(1...65_535).contains(port) {
            throw OutboundRefusal(host: host, reason: "port \(port) is not 1-65535")
        }
        guard let target = OutboundHost(host) else {
            throw OutboundRefusal(host: host, reason: "not an address in its standard form nor a DNS name")
        }
        func permitted(_ address: IPAddress) throws {
            guard let kind = OutboundAddressRules.refusal(of: address), !allowedRanges.contains(where: { $0.contains(address) }) else {
                return
            }
            throw OutboundRefusal(host: host, reason: "\(address) is \(kind)")
        }
        switch target {
        case .address(let address):
            try permitted(address)
            return Destination(host: host, address: address)
        case .name(let name):
            let named = allowedNames.contains(name)
            if !named, let reason = target.nameRefusal { throw OutboundRefusal(host: host, reason: reason) }
            // Neither a registration nor a delivery waits on a slow resolver for long: a registration accepts the name
            // (each request checks it), a request fails (and is retried on its caller's schedule).
            guard let addresses = await Self.resolve(name, with: resolver, within: lookupLimit) else {
                if mustResolve { throw HostResolutionError(reason: "\(name): the resolver failed or gave no answer within \(lookupLimit)") }
                return Destination(host: host)
            }
            guard let first = addresses.first else {
                if mustResolve { throw HostResolutionError(reason: "\(name) does not resolve") }
                return Destination(host: host)
            }
            // Every address must pass, not only the one connected to: a name that answers a public and a private address
            // in turn would otherwise win now and then.
            if !named { for address in addresses { try permitted(address) } }
            return Destination(host: host, address: first)
        }
    }
}
