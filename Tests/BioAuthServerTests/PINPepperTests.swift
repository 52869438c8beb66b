import BioAuthCore
import Crypto
import Foundation
import HummingbirdBcrypt
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// A 6-digit PIN under bcrypt alone falls to an offline search of a million values once the database leaks.
/// PIN hashes are sealed under a key kept outside the database.
@Suite("Payment PIN pepper")
struct PINPepperTests {
    static func storedPIN(_ api: API, account: String? = nil) async throws -> (account: String, hash: String) {
        try await api.database.transaction { db in
            let row = try #require(try await db.select().columns("account_id", "pin_hash").from("payment_pins").first())
            return (try row.decode(column: "account_id", as: String.self), try row.decode(column: "pin_hash", as: String.self))
        }
    }

    /// Alice, signed in, with the PIN 258046; her access token.
    static func aliceWithPIN(_ api: API) async throws -> String {
        try await api.createAccount()
        let tokens = try await api.signIn()
        try #require(try await api.setPIN(token: tokens.access).status == 204)
        return tokens.access
    }

    static func pay(_ api: API, token: String, pin: String = "258046") async throws -> Reply {
        let payment = try await api.createPayment(token: token)
        let id = try #require(payment["paymentId"])
        return try await api.call(.post, "/v1/payments/\(id)/pin-authorization", json: ["pin": pin], token: token)
    }

    @Test("the database alone holds no bcrypt hash to search: the PIN cannot be found offline from it")
    func leakedDatabase() async throws {
        try await TestServer.run { api in
            let token = try await Self.aliceWithPIN(api)
            let stored = try await Self.storedPIN(api).hash
            #expect(stored.hasPrefix("v1.") && !stored.contains("$2"))
            // What an offline search would do with a leaked row: nothing here verifies, the right PIN included.
            #expect(!(Bcrypt.verify("258046", hash: stored)))
            // The server still verifies with its key.
            #expect(try await Self.pay(api, token: token)["status"] == "authorized")
            #expect(try await Self.pay(api, token: token, pin: "258047").code == "wrong_pin")
        }
    }

    @Test("PIN hashes stored before the key existed are sealed at start-up and keep working")
    func legacyHashesSealed() async throws {
        try await TestServer.run { api in
            let token = try await Self.aliceWithPIN(api)
            let account = try await Self.storedPIN(api).account
            // A row as an earlier version wrote it: bcrypt of the PIN, unsealed.
            let legacy = Bcrypt.hash("135790", cost: 4)
            try await api.database.transaction { db in
                try await db.update("payment_pins").set("pin_hash", to: legacy).where("account_id", .equal, account).run()
            }
            #expect(try await api.service.sealLegacyPINHashes() == 1)
            let sealed = try await Self.storedPIN(api).hash
            #expect(sealed.hasPrefix("v1.") && api.service.pins.open(sealed, for: account) == legacy)
            #expect(try await api.service.sealLegacyPINHashes() == 0)
            #expect(try await Self.pay(api, token: token, pin: "135790")["status"] == "authorized")
        }
    }

    @Test("a sealed hash copied onto another account's row does not open there")
    func movedHash() async throws {
        try await TestServer.run { api in
            try await api.createAccount("alice")
            let alice = try await api.signIn("alice")
            #expect(try await api.setPIN("258046", token: alice.access).status == 204)
            try await api.createAccount("mallory")
            let mallory = try await api.signIn("mallory", installation: "phone-2")
            #expect(try await api.setPIN("864209", token: mallory.access).status == 204)
            // Someone with write access to the database copies Mallory's sealed hash (PIN 864209) onto Alice's row.
            let aliceID = try #require(try await api.call(.get, "/v1/me", token: alice.access)["accountId"])
            try await api.database.transaction { db in
                let rows = try await db.select().columns("account_id", "pin_hash").from("payment_pins").all()
                let hashes = try rows.map {
                    (try $0.decode(column: "account_id", as: String.self), try $0.decode(column: "pin_hash", as: String.self))
                }
                let malloryHash = try #require(hashes.first { $0.0 != aliceID }?.1)
                try await db.update("payment_pins").set("pin_hash", to: malloryHash).where("account_id", .equal, aliceID).run()
            }
            #expect(try await Self.pay(api, token: alice.access, pin: "864209").code == "wrong_pin")
        }
    }

    @Test("a PIN key that did not seal the stored hashes stops start-up, naming the key file")
    func wrongKeyFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-pin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("pin-key").path
        try await TestServer.run(
            configure: { $0.pinKeyPath = keyFile },
            { api in
                _ = try await Self.aliceWithPIN(api)
                let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
                // Another instance over the same database, started with another key.
                var other = api.service.configuration
                other.pinKeyPath = folder.appendingPathComponent("other-key").path
                await #expect(throws: ConfigurationError.self) {
                    _ = try await BioAuthServerApplication.build(
                        configuration: other,
                        database: api.database,
                        clock: api.clock,
                        random: SystemRandomSource(),
                        logger: Logger(label: "test")
                    )
                }
                // The key that sealed them passes the same check.
                #expect(try await api.service.sealLegacyPINHashes() == 0)
                #expect(try SecretSealer.load(path: keyFile).keyID == api.service.pins.keyID)
            }
        )
    }
}
