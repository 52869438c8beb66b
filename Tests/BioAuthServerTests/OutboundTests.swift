import BioAuthCore
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import SQLKit
import Testing

@testable import BioAuthServer

/// Server-side request forgery: the server's own requests (webhook deliveries) go to public destinations only, unless
/// the operator allows one, checked when the URL is registered and again on the address each request connects to.
@Suite("Outbound requests")
struct OutboundTests {
    /// A resolver whose answers the test changes while the server runs (a name rebound to another address).
    final class SwitchingResolver: HostResolver {
        private let answers: NIOLockedValueBox<[String: [String]]>
        init(_ answers: [String: [String]]) { self.answers = NIOLockedValueBox(answers) }
        func answer(_ name: String, with addresses: [String]) { answers.withLockedValue { $0[name] = addresses } }
        func addresses(of name: String) async throws -> [IPAddress] {
            answers.withLockedValue { $0[name] ?? [] }.compactMap(IPAddress.init)
        }
    }

    @Test(
        "every non-public range is refused, with the kind of address it is; public addresses pass",
        arguments: [
            ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("10.0.0.1", "private"), ("172.16.0.1", "private"),
            ("172.31.255.255", "private"), ("192.168.1.1", "private"), ("169.254.169.254", "link-local"), ("100.64.0.1", "shared (CGNAT)"),
            ("0.0.0.0", "unspecified"), ("224.0.0.1", "multicast"), ("255.255.255.255", "reserved"), ("192.0.2.5", "documentation"),
            ("198.51.100.1", "documentation"), ("203.0.113.9", "documentation"), ("198.18.0.1", "benchmarking"), ("::1", "loopback"),
            ("::", "unspecified"), ("::ffff:10.0.0.1", "IPv4-mapped"), ("::ffff:8.8.8.8", "IPv4-mapped"), ("fe80::1", "link-local"),
            ("fc00::1", "unique-local"), ("fd12:3456::1", "unique-local"), ("ff02::1", "multicast"), ("2001:db8::1", "documentation"),
            ("64:ff9b::a00:1", "NAT64"), ("2002:a00:1::", "6to4"), ("2001::1", "IETF protocol assignments"), ("::10.0.0.1", "IPv4-compatible"),
        ]
    )
    func refusedRanges(address: String, kind: String) throws {
        let parsed = try #require(IPAddress(address))
        #expect(OutboundAddressRules.refusal(of: parsed) == kind)
    }

    @Test(
        "public addresses are not refused",
        arguments: ["8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "2a00:1450::1"]
    )
    func publicAddresses(address: String) throws {
        #expect(OutboundAddressRules.refusal(of: try #require(IPAddress(address))) == nil)
    }

    @Test("addresses read only in their standard forms; ranges only with their host bits zero")
    func parsing() throws {
        for text in ["2130706433", "127.1", "0x7f.0.0.1", "0177.0.0.1", "1.2.3.4.5", "256.0.0.1", "fe80::1%eth0", "", "::g"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress("[::1]")?.description == "::1" && IPAddress("10.0.0.1")?.bytes == [10, 0, 0, 1])
        #expect(IPRange("10.0.0.1/8") == nil && IPRange("10.0.0.0/33") == nil && IPRange("10.0.0.0/-1") == nil)
        let range = try #require(IPRange("10.20.0.0/16"))
        #expect(range.contains(IPAddress("10.20.9.9")!) && !range.contains(IPAddress("10.21.0.1")!) && !range.contains(IPAddress("::1")!))
        #expect(OutboundHost("2130706433") == nil && OutboundHost("0x7f.1") == nil && OutboundHost("a..b") == nil)
        #expect(OutboundHost("Vault.Internal.") == .name("vault.internal"))
        var policy = OutboundPolicy()
        for entry in ["10.0.0.0/33", "10.0.0.1/8", "not a host", "a/b"] {
            policy.allowed = [entry]
            #expect(throws: ConfigurationError.self, "\(entry)") { try policy.validate() }
        }
        policy.allowed = ["hooks.bank.internal", "10.20.0.0/16", "::1", "127.0.0.1"]
        try policy.validate()
    }

    /// A webhook registration over HTTP with the default policy (nothing allowed) and `resolver`.
    static func register(_ urls: [String], allowed: [String] = [], resolver: any HostResolver) async throws -> [(String, Int, String?)] {
        let client = NIOLockedValueBox<ServiceClients.Credentials?>(nil)
        return try await TestServer.run(
            .live,
            configure: { configuration in
                configuration.outbound.allowed = allowed
                configuration.outbound.resolver = resolver
            },
            { api in
                let credentials = try await ServiceClients(database: api.database, clock: api.clock).create(name: "bank", scopes: ["webhooks:write"])
                client.withLockedValue { $0 = credentials }
                let token = try #require(try await api.serviceToken(credentials)["access_token"])
                var replies: [(String, Int, String?)] = []
                for url in urls {
                    let reply = try await api.call(
                        .post,
                        "/v1/service/webhook-endpoints",
                        json: ["url": url, "events": ["payment.authorized"]],
                        token: token
                    )
                    replies.append((url, reply.status, reply.code))
                }
                let stored = try await api.database.transaction { db in
                    try await db.raw("SELECT COUNT(*) AS n FROM webhook_endpoints").first()?.decode(column: "n", as: Int.self) ?? -1
                }
                #expect(stored == replies.filter { $0.1 == 201 }.count, "only what was accepted is stored")
                return replies
            }
        )
    }

    @Test("the outside testers' destinations are refused at registration, each with a stable code")
    func testersList() async throws {
        let resolver = StaticHostResolver(["metadata.google.internal": ["169.254.169.254"], "vault.internal": ["10.0.0.8"]])
        let notAllowed = [
            "https://127.0.0.1:1/", "https://10.0.0.1/", "https://192.168.1.1/", "https://172.16.0.1/", "https://169.254.169.254/",
            "https://[::1]/", "https://[::ffff:10.0.0.1]/", "https://0.0.0.0/", "https://localhost:6379/", "https://metadata.google.internal/",
            "https://vault.internal/", "https://[fe80::1]/", "https://vault/", "https://printer.local/", "https://app.localhost/",
            "https://LOCALHOST./", "http://127.0.0.1:8080/hook", "http://localhost:8080/hook",
        ]
        let invalid = ["https://2130706433/", "https://127.1/", "https://0x7f000001/", "https://bank.example:99999/", "https://bank.example:0/"]
        let replies = try await Self.register(notAllowed + invalid, resolver: resolver)
        for (url, status, code) in replies {
            if notAllowed.contains(url) {
                #expect(status == 422 && code == "webhook_destination_not_allowed", "\(url): \(status) \(code ?? "")")
            } else {
                #expect(status == 400 && code == "invalid_webhook_url", "\(url): \(status) \(code ?? "")")
            }
        }
    }

    @Test("a trailing dot and capitals name the same host: every rule compares names as the resolver reads them")
    func trailingDot() async throws {
        let spellings = ["http://localhost/", "http://localhost./", "http://LOCALHOST./", "http://localhost.:8080/x"]
        // Not allowed: refused as a name of one label, however it is spelled; allowed by name: accepted, however spelled.
        for (allowed, status) in [([String](), 422), (["127.0.0.1"], 422), (["LOCALHOST."], 201)] {
            for (url, got, code) in try await Self.register(spellings, allowed: allowed, resolver: StaticHostResolver()) {
                #expect(got == status, "\(url) with \(allowed) allowed: \(got) \(code ?? "")")
            }
        }
        #expect(OutboundHost("Vault.Internal.")?.nameRefusal == OutboundHost("vault.internal")?.nameRefusal)
        #expect(OutboundHost("app.localhost.")?.nameRefusal != nil)
    }

    @Test("a name is checked on every address it resolves to; one that does not resolve yet is accepted (each delivery checks)")
    func namesResolved() async throws {
        let resolver = StaticHostResolver([
            "hooks.bank.example": ["93.184.216.34", "2606:4700::1111"],
            "inside.bank.example": ["10.0.0.7"],
            "both.bank.example": ["93.184.216.34", "192.168.0.10"],
            "mapped.bank.example": ["::ffff:127.0.0.1"],
        ])
        let replies = try await Self.register(
            [
                "https://hooks.bank.example/h", "https://inside.bank.example/h", "https://both.bank.example/h", "https://mapped.bank.example/h",
                "https://not-yet.bank.example/h", "https://93.184.216.34:8443/h",
            ],
            resolver: resolver
        )
        #expect(replies.map(\.1) == [201, 422, 422, 422, 201, 201], "\(replies)")
    }

    @Test("the allow list lets named hosts and ranges through, and nothing next to them")
    func allowList() async throws {
        let resolver = StaticHostResolver(["hooks.bank.internal": ["10.9.0.1"], "other.bank.internal": ["10.9.0.2"]])
        let replies = try await Self.register(
            [
                "https://hooks.bank.internal/h", "https://other.bank.internal/h", "https://10.20.3.4/h", "https://10.21.0.1/h",
                "http://127.0.0.1:9/h", "https://[fd00::5]/h",
            ],
            allowed: ["hooks.bank.internal", "10.20.0.0/16", "127.0.0.1", "fd00::/8"],
            resolver: resolver
        )
        #expect(replies.map(\.1) == [201, 422, 201, 422, 201, 201], "\(replies)")
    }

    @Test("a name rebound to a private address after registration (DNS rebinding) is refused at connect time, and nothing reaches it")
    func rebinding() async throws {
        let receiver = try await LoopbackWebhookReceiver.start()
        let port = receiver.url.port ?? 0
        let resolver = SwitchingResolver(["hooks.bank.example": ["93.184.216.34"]])
        var policy = OutboundPolicy()
        policy.resolver = resolver
        let outbound = OutboundHTTP(policy: policy)
        let url = "http://hooks.bank.example:\(port)/hook"
        #expect(try await outbound.check(url).address == IPAddress("93.184.216.34"))
        resolver.answer("hooks.bank.example", with: ["127.0.0.1"])
        await #expect(throws: OutboundRefusal.self) {
            _ = try await outbound.post(to: url, headers: ["BioAuth-Event-Id": "evt_x"], body: Data("{}".utf8), timeout: 2)
        }
        #expect(receiver.deliveries.isEmpty)

        // The control: the same request with loopback allowed arrives, although no DNS knows the name, because the connection
        // goes to the address the guard checked (and the Host header still names the URL's host).
        policy.allowed = ["127.0.0.0/8"]
        let status = try await OutboundHTTP(policy: policy).post(
            to: url,
            headers: ["BioAuth-Event-Id": "evt_y", "BioAuth-Event-Type": "payment.authorized"],
            body: Data("{}".utf8),
            timeout: 5
        )
        #expect(status == 200 && receiver.deliveries.map(\.eventID) == ["evt_y"])
        await receiver.stop()
    }

    @Test("a delivery rebound to a private address fails as \"not delivered\" to its owner; the log and the metric say why")
    func rebindingThroughDispatcher() async throws {
        let resolver = SwitchingResolver(["hooks.bank.example": ["93.184.216.34"]])
        let sink = LogSink()
        try await TestServer.run(
            .live,
            logSink: sink,
            configure: { configuration in
                configuration.webhooks.pollInterval = 0
                configuration.webhooks.timeout = 1
                configuration.outbound.allowed = []
                configuration.outbound.resolver = resolver
            },
            { api in
                let client = try await ServiceClients(database: api.database, clock: api.clock).create(name: "bank", scopes: ["webhooks:write"])
                let token = try #require(try await api.serviceToken(client)["access_token"])
                let created = try await api.call(
                    .post,
                    "/v1/service/webhook-endpoints",
                    json: ["url": "https://hooks.bank.example/h", "events": ["device.registered"]],
                    token: token
                )
                try #require(created.status == 201, "\(created.raw)")
                resolver.answer("hooks.bank.example", with: ["169.254.169.254"])
                try await api.createAccount()
                #expect(try await api.register(TestKey(), token: try await api.signIn().access).status == 201)
                #expect(try await WebhookDispatcher(service: api.service).runOnce().attempted == 1)
                let endpoint = try #require(created["endpointId"])
                let listed = try await api.call(.get, "/v1/service/webhook-endpoints/\(endpoint)/deliveries", token: token)
                let delivery = try #require((listed.json["deliveries"] as? [[String: Any]])?.first)
                #expect(delivery["lastError"] as? String == "not delivered", "\(listed.raw)")
                #expect(!listed.raw.contains("169.254"), "the owner is not told what the name resolved to")
                #expect(sink.text.contains("169.254.169.254 is link-local"), "the operator is")
                let metrics = String(decoding: try #require(api.service.metrics.exposition()), as: UTF8.self)
                #expect(metrics.contains(#"bioauth_webhook_attempt_failures_total{reason="destination_refused"} 1"#), "\(metrics)")
            }
        )
    }

    @Test("a registration does not wait on a resolver that never answers: the name is then checked at each delivery")
    func slowResolver() async {
        struct Hanging: HostResolver {
            func addresses(of name: String) async throws -> [IPAddress] {
                try await Task.sleep(for: .seconds(600))
                return []
            }
        }
        #expect(await OutboundHTTP.resolve("hooks.bank.example", with: Hanging(), within: .milliseconds(20)) == nil)
        #expect(
            await OutboundHTTP.resolve("localhost", with: StaticHostResolver(), within: .seconds(600)) == [
                IPAddress("127.0.0.1")!, IPAddress("::1")!,
            ]
        )
    }

    @Test("the system resolver reads the machine's hosts file and says a name that does not exist has no address")
    func systemResolver() async throws {
        let local = try await SystemHostResolver().addresses(of: "localhost")
        #expect(local.contains { OutboundAddressRules.refusal(of: $0) == "loopback" }, "\(local)")
        do {
            #expect(try await SystemHostResolver().addresses(of: "no-such-host.invalid").isEmpty)
        } catch is HostResolutionError {
            // A machine without a DNS server cannot say that the name does not exist, only that it cannot answer.
        }
    }

    @Test("a stored detail or status from an earlier version is shown as coarsely as a new one")
    func olderDetails() {
        for stored in ["connection refused", "timeout", "I/O error 113", "HTTP 503", "HTTP 500", "HTTP client: x", "could not connect"] {
            #expect(AttemptFailure.shown(stored: stored) == "not delivered", "\(stored)")
        }
        #expect(AttemptFailure.shown(stored: "not sent: no signing secret opens with the server's key").hasPrefix("not sent"))
    }

    @Test("only the outbound guard makes an HTTP client in the server: every request of the server's own goes through it")
    func oneDoor() throws {
        let files = try SourceTree.swiftFiles()
        #expect(files.count > 50)
        var makers: [String] = []
        for file in files {
            for needle in ["HTTPClient(", "HTTPClient.shared", "URLSession", "ClientBootstrap("] where file.text.contains(needle) {
                makers.append("\((file.path as NSString).lastPathComponent): \(needle)")
            }
        }
        #expect(makers == ["OutboundHTTP.swift: HTTPClient("], "\(makers)")
    }
}
