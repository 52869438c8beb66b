import BioAuthCore
import BioAuthTesting
import Foundation
import HummingbirdTesting
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// Receipt key rotation: old receipts keep verifying, new ones are signed by the new key, a retired key cannot sign.
@Suite("Receipt key rotation")
struct ReceiptKeyRotationTests {
    @Test("a receipt signed before two rotations still verifies against the published keys", arguments: StorageBackend.available)
    func twoRotations(backend: StorageBackend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-rotation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyPath = folder.appendingPathComponent("receipt-key.pem").path
        let location = try await TestDatabase.make(backend)
        let database = try await openDatabase(location.location, logger: Logger(label: "test"))
        let clock = ManualClock()
        defer { Task { await location.drop() } }

        // Before any rotation: the first server makes the key file and signs with it.
        let first = try await Self.serve(keyPath: keyPath, database: database, clock: clock) { api in try await Self.paidReceipt(api, "first") }
        try FileManager.default.copyItem(atPath: keyPath, toPath: keyPath + ".original")

        clock.advance(by: 86_400)
        let rotation1 = try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: database, clock: clock)
        #expect(rotation1.retiredKeyID == first.keyId)
        let second = try await Self.serve(keyPath: keyPath, database: database, clock: clock) { api in try await Self.paidReceipt(api, "second") }
        #expect(second.keyId == rotation1.newKeyID)

        clock.advance(by: 86_400)
        let rotation2 = try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: database, clock: clock)
        let (third, published) = try await Self.serve(keyPath: keyPath, database: database, clock: clock) { api in
            (try await Self.paidReceipt(api, "third"), try await api.call(.get, "/v1/receipt-keys"))
        }
        #expect(third.keyId == rotation2.newKeyID)

        // Three keys, oldest first: two retired (with when), one signing.
        let keys = try #require(published.json["keys"] as? [[String: Any]])
        #expect(keys.map { $0["keyId"] as? String } == [first.keyId, second.keyId, third.keyId])
        #expect(keys.map { $0["retiredAt"] != nil } == [true, true, false])
        #expect(keys.allSatisfy { $0["notBefore"] is String })
        let publicKeys = try keys.map { key in
            let encoded = try #require(key["publicKey"] as? String)
            return try DevicePublicKey(x963Representation: try #require(Base64URL.decode(encoded)))
        }
        for receipt in [first, second, third] {
            #expect(publicKeys.contains { receipt.isValid(signedBy: $0) }, "receipt by \(receipt.keyId) verifies")
        }
        #expect(!third.isValid(signedBy: publicKeys[0]), "each receipt verifies with its own key only")

        // A server still holding the first key file refuses to start: it would sign with a retired key.
        let stale = await #expect(throws: ConfigurationError.self) {
            try await Self.serve(keyPath: keyPath + ".original", database: database, clock: clock) { _ in }
        }
        #expect(stale?.message.contains("was retired by a rotation") == true, "\(String(describing: stale))")
        try await database.close()
    }

    @Test("a rotation cut short is not repeated over it, and a missing key file is named")
    func interrupted() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-rotation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyPath = folder.appendingPathComponent("receipt-key.pem").path
        let database = try await openDatabase(":memory:", logger: Logger(label: "test"))
        let missing = await #expect(throws: ConfigurationError.self) { try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: database) }
        #expect(missing?.message == "there is no receipt key file \(keyPath) to rotate")
        try await Self.serve(keyPath: keyPath, database: database, clock: ManualClock()) { _ in }
        try "left over".write(toFile: keyPath + ".new", atomically: true, encoding: .utf8)
        let before = try String(contentsOfFile: keyPath, encoding: .utf8)
        let left = await #expect(throws: ConfigurationError.self) { try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: database) }
        #expect(left?.message.contains("left from a rotation that did not finish") == true)
        #expect(try String(contentsOfFile: keyPath, encoding: .utf8) == before, "the key file is untouched")
        try await database.close()
    }

    // MARK: Helpers

    /// Runs a server over `database` that signs with the key in `keyPath` (made there if missing).
    static func serve<R: Sendable>(
        keyPath: String,
        database: any DatabaseExecutor,
        clock: ManualClock,
        _ body: @escaping @Sendable (API) async throws -> R
    ) async throws -> R {
        var configuration = ServerConfiguration.forTests()
        configuration.receiptKeyPath = keyPath
        // The application closes its database when it stops; this one outlives several servers ("restarts").
        let (app, service) = try await BioAuthServerApplication.build(
            configuration: configuration,
            database: KeptOpen(base: database),
            clock: clock,
            random: SystemRandomSource(),
            logger: Logger(label: "test")
        )
        return try await app.test(.router) { client in
            try await body(API(client: client, database: database, clock: clock, service: service, metricsPorts: AsyncStream { $0.finish() }))
        }
    }

    /// A new account pays by PIN; the payment's receipt.
    static func paidReceipt(_ api: API, _ username: String) async throws -> PaymentReceipt {
        try await api.createAccount(username)
        let tokens = try await api.signIn(username)
        #expect(try await api.setPIN(token: tokens.access).status == 204)
        let payment = try #require(try await api.createPayment(token: tokens.access)["paymentId"])
        let paid = try await api.call(.post, "/v1/payments/\(payment)/pin-authorization", json: ["pin": "258046"], token: tokens.access)
        try #require(paid.status == 200, "\(paid.raw)")
        return try JSONDecoder().decode(PaymentReceipt.self, from: try JSONSerialization.data(withJSONObject: try #require(paid.json["receipt"])))
    }
}

/// A database that a stopping server does not close.
struct KeptOpen: DatabaseExecutor {
    let base: any DatabaseExecutor
    var dialect: DatabaseDialect { base.dialect }
    func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.transaction(body)
    }
    func close() async throws {}
}
