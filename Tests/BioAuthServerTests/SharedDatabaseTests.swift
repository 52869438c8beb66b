import BioAuthCore
import BioAuthTesting
import Foundation
import Logging
import TestTools
import Testing

@testable import BioAuthServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Two server instances on one PostgreSQL database, as behind a load balancer. Runs when
/// `BIOAUTH_TEST_POSTGRES_URL` is set (`.ci/run` sets it).
@Suite("Two instances, one PostgreSQL", .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres))))
struct SharedDatabaseTests {
    /// JSON over HTTP to one instance.
    struct Instance: Sendable {
        let url: URL

        func call(
            _ method: String,
            _ path: String,
            _ json: [String: any Sendable]? = nil,
            token: String? = nil,
            idempotencyKey: String? = nil
        ) async throws -> Reply {
            var request = URLRequest(url: url.appendingPathComponent(String(path.dropFirst())))
            request.httpMethod = method
            if let json {
                request.httpBody = try JSONSerialization.data(withJSONObject: json)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
            let (data, response) = try await URLSession.shared.data(for: request)
            let raw = String(decoding: data, as: UTF8.self)
            return Reply(
                status: (response as? HTTPURLResponse)?.statusCode ?? 0,
                json: (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:],
                raw: raw
            )
        }
    }

    static func withTwoInstances(_ body: (Instance, Instance) async throws -> Void) async throws {
        let database = try await TestDatabase.make(.postgres)
        let configuration = ServerConfiguration.forTests(database: database.location)
        var logger = Logger(label: "two-instances")
        logger.logLevel = .error
        let first = try await LoopbackServer.start(configuration: configuration, logger: logger) { database in
            _ = try await PayeeRegistry(database: database).register(id: "coffee-1", name: "Coffee Shop")
        }
        let second = try await LoopbackServer.start(configuration: configuration, logger: logger)
        do {
            try await body(Instance(url: first.url), Instance(url: second.url))
        } catch {
            await first.stop()
            await second.stop()
            await database.drop()
            throw error
        }
        await first.stop()
        await second.stop()
        await database.drop()
    }

    /// Binds `key` with a registration challenge from one instance, registered through another.
    static func register(_ key: TestKey, challengeFrom issuer: Instance, registerOn target: Instance, token: String) async throws -> Reply {
        let registration = try await issuer.call("POST", "/v1/devices/challenges", token: token)
        return try await target.call(
            "POST",
            "/v1/devices",
            [
                "challengeId": try #require(registration["challengeId"]), "publicKey": key.publicKey, "keyId": key.keyID,
                "biometryKind": "faceID", "deviceName": "Phone", "counter": 0,
                "signature": try key.sign(.register, challenge: try #require(registration["challenge"]), counter: 0),
            ],
            token: token
        )
    }

    @Test("a challenge from one instance is verified by the other; a replay to either is refused")
    func challengesAcrossInstances() async throws {
        try await Self.withTwoInstances { a, b in
            #expect(try await a.call("POST", "/v1/accounts", ["username": "alice", "password": "correct horse"]).status == 201)
            let tokens = try await b.call("POST", "/v1/sessions", ["username": "alice", "password": "correct horse", "installationId": "phone-1"])
            let access = try #require(tokens["accessToken"])
            let key = TestKey()
            let registered = try await Self.register(key, challengeFrom: a, registerOn: b, token: access)
            #expect(registered.status == 201, "\(registered.raw)")
            let challenge = try await a.call("POST", "/v1/sessions/biometric/challenges", ["keyId": key.keyID])
            let signIn: [String: any Sendable] = [
                "challengeId": try #require(challenge["challengeId"]), "keyId": key.keyID, "counter": 1,
                "signature": try key.sign(.login, challenge: try #require(challenge["challenge"]), counter: 1),
            ]
            #expect(try await b.call("POST", "/v1/sessions/biometric", signIn).status == 201)
            #expect(try await a.call("POST", "/v1/sessions/biometric", signIn).code == "challenge_used")
            #expect(try await b.call("POST", "/v1/sessions/biometric", signIn).code == "challenge_used")
        }
    }

    @Test("one payment authorized at once through both instances succeeds exactly once; a revoked device is refused by the other at once")
    func paymentAndRevocationAcrossInstances() async throws {
        try await Self.withTwoInstances { a, b in
            _ = try await a.call("POST", "/v1/accounts", ["username": "alice", "password": "correct horse"])
            let session = try await a.call("POST", "/v1/sessions", ["username": "alice", "password": "correct horse", "installationId": "phone-1"])
            let access = try #require(session["accessToken"])
            let key = TestKey()
            let device = try await Self.register(key, challengeFrom: a, registerOn: a, token: access)
            let deviceID = try #require(device["deviceId"])
            let payment = try await b.call(
                "POST",
                "/v1/payments",
                ["amountMinor": 8800, "currency": "CNY", "payeeId": "coffee-1", "payeeName": "Coffee Shop"],
                token: access,
                idempotencyKey: "order-1"
            )
            let paymentID = try #require(payment["paymentId"])
            let transaction = try CanonicalTransaction(
                paymentID: paymentID,
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "coffee-1",
                payeeName: "Coffee Shop"
            )
            var requests: [(Instance, [String: any Sendable])] = []
            for (index, instance) in [a, b, a, b].enumerated() {
                let challenge = try await instance.call("POST", "/v1/payments/\(paymentID)/challenges", ["keyId": key.keyID], token: access)
                let challengeText = try #require(challenge["challenge"])
                let payload = try SignedPayload(
                    purpose: .payment,
                    relyingPartyID: TestServer.relyingPartyID,
                    challenge: try #require(Base64URL.decode(challengeText)),
                    keyID: key.keyIDBytes,
                    counter: UInt64(index + 1),
                    transactionHash: transaction.hash
                )
                requests.append(
                    (
                        index % 2 == 0 ? b : a,
                        [
                            "challengeId": try #require(challenge["challengeId"]), "keyId": key.keyID, "counter": index + 1,
                            "transactionHash": Base64URL.encode(transaction.hash),
                            "signature": Base64URL.encode(try key.privateKey.signature(for: payload.bytes).derRepresentation),
                        ]
                    )
                )
            }
            let sent = requests
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (instance, body) in sent {
                    group.addTask { try await instance.call("POST", "/v1/payments/\(paymentID)/biometric-authorization", body, token: access).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(try await b.call("GET", "/v1/payments/\(paymentID)", token: access)["status"] == "authorized")

            #expect(try await b.call("DELETE", "/v1/devices/\(deviceID)", token: access).status == 204)
            #expect(try await a.call("POST", "/v1/sessions/biometric/challenges", ["keyId": key.keyID]).code == "device_revoked")
        }
    }
}
