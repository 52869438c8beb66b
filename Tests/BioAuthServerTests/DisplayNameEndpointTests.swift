import BioAuthCore
import Foundation
import Testing

/// The outside attack run created payments to look-alike payee names and could authorize them. Names shown in a
/// prompt now follow ``DisplayName``'s rule wherever they enter.
@Suite("Look-alike names refused where they enter")
struct DisplayNameEndpointTests {
    static let lookalikes = [
        "Coffee\u{00A0}Shop", "Coffee\u{2009}Shop", "Coffee\u{202F}Shop", "Coffee\u{3000}Shop", "Coffee Shop\u{3164}", "\u{115F}Coffee Shop",
        "Coffee\u{034F} Shop", " Coffee Shop", "Coffee Shop ", "Coffee  Shop", "Соffee Shop",
    ]

    @Test("a payment to a look-alike payee name is refused and nothing is stored", arguments: lookalikes)
    func payee(_ name: String) async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let before = try await api.snapshot()
            let reply = try await api.createPayment(token: tokens.access, payeeName: name)
            #expect(reply.status == 400)
            #expect(reply.code == "invalid_payee")
            #expect(try await api.snapshot() == before)
        }
    }

    @Test("a device with a look-alike name is not registered", arguments: lookalikes)
    func device(_ name: String) async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let reply = try await api.register(TestKey(), token: tokens.access, name: name)
            #expect(reply.code == "invalid_device_name")
            let list = try await api.call(.get, "/v1/devices", token: tokens.access)
            #expect((list.json["devices"] as? [[String: Any]])?.isEmpty == true, "\(list.raw)")
        }
    }

    @Test("a decomposed payee name is stored, shown and hashed in NFC, and the payment authorizes")
    func nfc() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let created = try await api.createPayment(token: tokens.access, payeeName: "Cafe\u{0301} Zoe\u{0308}")
            #expect(created.status == 201, "\(created.raw)")
            let stored = try #require(created["payeeName"])
            #expect(Array(stored.unicodeScalars) == Array("Caf\u{00E9} Zo\u{00EB}".unicodeScalars))
            let authorized = try await api.authorizeWithBiometrics(created, key: key, counter: 1, token: tokens.access)
            #expect(authorized["status"] == "authorized", "\(authorized.raw)")
        }
    }
}
