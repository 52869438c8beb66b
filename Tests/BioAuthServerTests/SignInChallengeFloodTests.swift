import BioAuthCore
import Foundation
import NIOCore
import Testing

@testable import BioAuthServer

/// The outside attack run locked a key's owner out of biometric sign-in with 20 unauthenticated requests a minute
/// from anywhere. Limits now count per client address: a flood stays bounded, and the owner still gets through.
@Suite("Sign-in challenge floods")
struct SignInChallengeFloodTests {
    static func challenge(_ port: Int, _ key: TestKey, from source: String? = nil, forwardedFor: String? = nil) async throws -> Int {
        let headers = forwardedFor.map { ["X-Forwarded-For: \($0)"] } ?? []
        return try await RawHTTPConnection.offPool {
            try RawHTTPConnection.post(
                port: port,
                "/v1/sessions/biometric/challenges",
                json: #"{"keyId":"\#(key.keyID)"}"#,
                headers: headers,
                from: source
            )
        }.status
    }

    static func liveChallenges(_ api: API) async throws -> Int {
        try await api.database.transaction { db in
            try await db.raw("SELECT COUNT(*) AS n FROM challenges WHERE purpose = 'login'").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    @Test("a flood from one address is bounded and does not lock out the owner at another (real source addresses)")
    func floodFromAnotherAddress() async throws {
        try await TestServer.run(
            .live,
            configure: {
                $0.signInChallengesPerWindow = 3
                $0.signInChallengesPerClient = 5
            },
            { api in
                let key = TestKey()
                _ = try await api.enrolled(key)
                let port = try #require(api.client.port)
                var attacker: [Int] = []
                for _ in 0..<25 { attacker.append(try await Self.challenge(port, key, from: "127.0.0.2")) }
                #expect(attacker.prefix(3).allSatisfy { $0 == 201 } && attacker.dropFirst(3).allSatisfy { $0 == 429 }, "\(attacker)")
                // Bounded: other key ids from the same address stop at the per-address limit too.
                #expect(try await Self.challenge(port, TestKey(), from: "127.0.0.2") == 429)
                #expect(try await Self.liveChallenges(api) == 3)
                // The owner, elsewhere, is not affected.
                for _ in 0..<3 { #expect(try await Self.challenge(port, key, from: "127.0.0.3") == 201) }
                // Nor is the owner's sign-in itself.
                #expect(try await api.biometricSignIn(key, counter: 1).status == 201)
            }
        )
    }

    @Test("behind a trusted proxy the client is the X-Forwarded-For address; elsewhere the header is ignored")
    func forwardedFor() async throws {
        try await TestServer.run(
            .live,
            configure: {
                $0.signInChallengesPerWindow = 2
                $0.trustedProxies = ["127.0.0.1"]
            },
            { api in
                let key = TestKey()
                _ = try await api.enrolled(key)
                let port = try #require(api.client.port)
                for _ in 0..<2 { #expect(try await Self.challenge(port, key, forwardedFor: "203.0.113.5") == 201) }
                #expect(try await Self.challenge(port, key, forwardedFor: "203.0.113.5") == 429)
                // A forged hop to the left of the real client does not help the attacker: the proxy appended the truth.
                #expect(try await Self.challenge(port, key, forwardedFor: "198.51.100.1, 203.0.113.5") == 429)
                #expect(try await Self.challenge(port, key, forwardedFor: "198.51.100.7") == 201)
                // From an address that is not a trusted proxy, the header is the client's own claim and is ignored.
                for _ in 0..<2 {
                    #expect(try await Self.challenge(port, key, from: "127.0.0.4", forwardedFor: "192.0.2.\(Int.random(in: 1...250))") == 201)
                }
                #expect(try await Self.challenge(port, key, from: "127.0.0.4", forwardedFor: "192.0.2.251") == 429)
            }
        )
    }

    @Test("addresses are counted as rate limits need them")
    func addressKeys() throws {
        let v6a = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa::1", port: 1)
        let v6b = try SocketAddress(ipAddress: "2001:db8:1:2:bbbb::9", port: 2)
        let v6other = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 1)
        #expect(ClientAddress.key(v6a) == ClientAddress.key(v6b))  // one /64, one client
        #expect(ClientAddress.key(v6a) != ClientAddress.key(v6other))
        #expect(ClientAddress.key(try SocketAddress(ipAddress: "::ffff:192.0.2.1", port: 1)) == "192.0.2.1")
        #expect(ClientAddress.key(try SocketAddress(ipAddress: "192.0.2.1", port: 1)) == "192.0.2.1")
        let proxy = try SocketAddress(ipAddress: "10.0.0.1", port: 1)
        let trusted: Set = ["10.0.0.1", "10.0.0.2"]
        #expect(ClientAddress.resolve(peer: proxy, forwardedFor: ["198.51.100.1, 10.0.0.2"], trustedProxies: trusted) == "198.51.100.1")
        #expect(ClientAddress.resolve(peer: proxy, forwardedFor: ["198.51.100.1", "203.0.113.9"], trustedProxies: trusted) == "203.0.113.9")
        #expect(ClientAddress.resolve(peer: proxy, forwardedFor: ["not-an-address"], trustedProxies: trusted) == "10.0.0.1")
        #expect(ClientAddress.resolve(peer: proxy, forwardedFor: [], trustedProxies: trusted) == "10.0.0.1")
        #expect(ClientAddress.resolve(peer: v6a, forwardedFor: ["198.51.100.1"], trustedProxies: trusted) == ClientAddress.key(v6a))
    }
}
