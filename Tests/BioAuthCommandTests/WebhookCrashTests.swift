import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import Logging
import NIOCore
import Testing

@testable import bioauth

#if canImport(Glibc)
import Glibc
#endif

/// `kill -9` of a real `bioauth serve` while it is delivering a webhook: the event was committed with the payment, so
/// the restarted server delivers it (at least once), signed.
@Suite("Webhooks across a crash")
struct WebhookCrashTests {
    @Test(
        "the server killed mid-delivery: after a restart the event arrives, signed, under the same event id",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func killMidDelivery() async throws {
        try await ServerProcessFixture.run("webhook-crash") { executable, folder, http in
            let database = folder.appendingPathComponent("bioauth.sqlite")
            try await ServerProcessFixture.registerPayees([("coffee-1", "Coffee Shop")], in: database)
            let executor = try await openDatabase(database.path, logger: Logger(label: "test-setup"))
            let client = try await ServiceClients(database: executor).create(name: "core-banking", scopes: ["webhooks:write"])
            try await executor.close()
            let receiver = try await LoopbackWebhookReceiver.start()
            // No delivery gets an answer before the server is dead: the first is held, and so are the retries that follow
            // its 1 s timeout if this test is slow to see it (up to six in all), so none is accepted before the kill.
            for _ in 0..<6 { receiver.script(.delayed(.seconds(60), status: 200)) }
            let settings = ServerProcessFixture.settings(
                in: folder,
                database: database.path,
                [
                    "BIOAUTH_BCRYPT_COST": "4", "BIOAUTH_WEBHOOK_POLL_INTERVAL": "0.1", "BIOAUTH_WEBHOOK_TIMEOUT": "1",
                    "BIOAUTH_WEBHOOK_RETRY_BASE": "0.2", "BIOAUTH_OUTBOUND_ALLOW": "127.0.0.1",
                ]
            )
            var server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)

            let token = try await Self.serviceToken(client, server: server.url, http: http)
            let endpoint = try await Self.post(
                server.url.appendingPathComponent("v1/service/webhook-endpoints"),
                json: ["url": receiver.url.absoluteString, "events": ["payment.authorized"]],
                bearer: token,
                http: http
            )
            receiver.trust(secret: try #require(endpoint["secret"] as? String))

            let api = BioAuthAPI(serverURL: server.url)
            _ = try await api.createAccount(username: "alice", password: "correct horse")
            let tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "phone-1")
            try await api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: tokens.accessToken)
            let payment = try await api.createPayment(
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "coffee-1",
                idempotencyKey: "o-1",
                accessToken: tokens.accessToken
            )
            _ = try await api.authorizeWithPIN(payment.id, pin: "258046", accessToken: tokens.accessToken)

            // The delivery is in flight (the receiver holds it); the server dies.
            let deadline = ContinuousClock.now + .seconds(20)
            while receiver.deliveries.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try #require(!receiver.deliveries.isEmpty, "the first delivery never started")
            kill(server.pid, SIGKILL)
            await server.stop()
            let beforeKill = receiver.deliveries.count
            receiver.clearScript()

            server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            let accepted = try await receiver.waitForEvents(1, timeout: .seconds(30))
            await server.stop()
            await receiver.stop()
            let delivered = try #require(accepted.first)
            #expect(delivered.eventType == "payment.authorized" && delivered.verified)
            #expect(delivered.eventID == receiver.deliveries.first?.eventID, "the same event, delivered again")
            #expect(delivered.attempt >= 2)
            #expect((receiver.deliveries.firstIndex { $0.answer == .status(200) } ?? -1) >= beforeKill, "accepted after the restart")
            #expect((delivered.json["data"] as? [String: Any])?["paymentId"] as? String == payment.id)
        }
    }

    static func serviceToken(_ client: ServiceClients.Credentials, server: URL, http: HTTPClient) async throws -> String {
        var request = HTTPClientRequest(url: server.appendingPathComponent("oauth/token").absoluteString)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(client.clientID):\(client.secret)".utf8).base64EncodedString())
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=client_credentials"))
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 65_536)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        return try #require(json?["access_token"] as? String, "\(String(buffer: body))")
    }

    static func post(_ url: URL, json: [String: any Sendable], bearer: String, http: HTTPClient) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 65_536)
        try #require(response.status.code == 201, "\(String(buffer: body))")
        return try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
    }
}
