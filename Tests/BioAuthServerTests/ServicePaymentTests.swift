import BioAuthCore
import Foundation
import HTTPTypes
import SQLKit
import Testing

@testable import BioAuthServer

/// Payees the bank registers, and payments its backend asks a customer to authorize: the prompt shows the registered
/// name, never one the requester chose.
@Suite("Registered payees and service payments")
struct ServicePaymentTests {
    @Test(
        "the backend registers a payee and asks for a payment; the app lists it as pending and authorizes it; the receipt names the registered payee",
        arguments: StorageBackend.available
    )
    func servicePayment(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let bank = try await clients.create(name: "core-banking", scopes: ["payees:write", "payments:write"])
            let service = try #require(try await api.serviceToken(bank)["access_token"])
            let registered = try await api.registerPayee("merchant-coffee-042", name: "Coffee Shop", token: service)
            #expect(registered.status == 201 && registered["name"] == "Coffee Shop" && registered["verification"] == "verified", "\(registered.raw)")

            let key = TestKey()
            _ = try await api.enrolled(key)
            let user = Tokens(try await api.biometricSignIn(key, counter: 1))
            let account = try #require(try await api.call(.get, "/v1/me", token: user.access)["accountId"])

            let requested = try await api.servicePayment(account: account, payee: "merchant-coffee-042", key: "order-7", token: service)
            #expect(requested.status == 201 && requested["payeeName"] == "Coffee Shop" && requested["status"] == "pending", "\(requested.raw)")
            let again = try await api.servicePayment(account: account, payee: "merchant-coffee-042", key: "order-7", token: service)
            #expect(again["paymentId"] == requested["paymentId"], "a retry with the same key and body gets the same payment")
            // Keys are per client: the same key for another account is another body, refused, and nothing is written.
            let bob = try await api.enrolled(TestKey(), username: "bob")
            let bobAccount = try #require(try await api.call(.get, "/v1/me", token: bob.0.access)["accountId"])
            let snapshot = try await api.snapshot()
            let otherAccount = try await api.servicePayment(account: bobAccount, payee: "merchant-coffee-042", key: "order-7", token: service)
            #expect(otherAccount.status == 422 && otherAccount.code == "idempotency_key_reused", "\(otherAccount.raw)")
            #expect(try await api.snapshot() == snapshot)
            let missingKey = try await api.call(
                .post,
                "/v1/service/payments",
                json: ["accountId": account, "amountMinor": 8800, "currency": "CNY", "payeeId": "merchant-coffee-042"],
                token: service
            )
            #expect(missingKey.status == 400 && missingKey.code == "invalid_idempotency_key", "\(missingKey.raw)")
            // The user's own keys live apart: the same key from the app is a payment of its own.
            let own = try await api.createPayment(token: user.access, idempotencyKey: "order-7")
            #expect(own.status == 201 && own["paymentId"] != requested["paymentId"])

            let pending = try await api.call(.get, "/v1/payments?status=pending", token: user.access)
            let ids = (pending.json["payments"] as? [[String: Any]])?.compactMap { $0["paymentId"] as? String } ?? []
            #expect(Set(ids) == Set([requested["paymentId"], own["paymentId"]].compactMap { $0 }))
            let paid = try await api.authorizeWithBiometrics(requested, key: key, counter: 2, token: user.access)
            #expect(paid.status == 200 && paid["status"] == "authorized", "\(paid.raw)")
            #expect((paid.json["receipt"] as? [String: Any])?["payeeName"] as? String == "Coffee Shop")
            #expect(try await api.call(.get, "/v1/payments?status=authorized", token: user.access).raw.contains(try #require(requested["paymentId"])))

            let audited = try await api.database.transaction { db in
                try await db.raw("SELECT client_id FROM audit_events WHERE kind = 'payment_created' AND client_id IS NOT NULL").all()
            }
            #expect(try audited.map { try $0.decode(column: "client_id", as: String.self) } == [bank.clientID])
        }
    }

    @Test(
        "the customer's own payment is to a registered payee only and carries its registered name: a stolen token can't dress a payee up as another",
        arguments: StorageBackend.available
    )
    func customerPaymentsUseRegisteredNames(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let registry = PayeeRegistry(database: api.database, clock: api.clock)
            _ = try await registry.register(id: "evil-corp", name: "Evil Corp")
            _ = try await registry.register(id: "cafe-1", name: "Cafe\u{0301} Zoe\u{0308}")
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let before = try await api.snapshot()

            // The attack: pay evil-corp under the name of a shop the user trusts.
            let disguised = try await api.createPayment(token: tokens.access, payeeID: "evil-corp", payeeName: "Coffee Shop", register: false)
            #expect(disguised.status == 422 && disguised.code == "payee_name_mismatch", "\(disguised.raw)")
            let unregistered = try await api.createPayment(token: tokens.access, payeeID: "coffee-2", payeeName: "Coffee Shop", register: false)
            #expect(unregistered.status == 422 && unregistered.code == "payee_not_registered", "\(unregistered.raw)")
            #expect(try await api.snapshot() == before, "nothing is written for a refused payment")

            // Without a name the payment carries the registered one, which is what the device signs and the prompt shows.
            let honest = try await api.createPayment(token: tokens.access, payeeID: "evil-corp", payeeName: nil, register: false)
            #expect(honest.status == 201 && honest["payeeName"] == "Evil Corp", "\(honest.raw)")
            let signedAsCoffee = try await api.authorizeWithBiometrics(
                honest,
                key: key,
                counter: 1,
                token: tokens.access,
                tamper: { $0.payeeName = "Coffee Shop" }
            )
            #expect(signedAsCoffee.code == "transaction_mismatch", "a device that showed another name signed another transaction")
            // A name the app sends in another normalization form is the same name.
            let cafe = try await api.createPayment(token: tokens.access, payeeID: "cafe-1", payeeName: "Café Zoë", register: false)
            #expect(cafe.status == 201 && cafe["payeeName"] == "Caf\u{00E9} Zo\u{00EB}", "\(cafe.raw)")
        }
    }

    @Test(
        "refused: an unregistered payee, an unknown account, a look-alike name, a token without the scope (nothing is written); a payment says whether its payee was verified"
    )
    func refusals() async throws {
        try await TestServer.run { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let payees = try #require(try await api.serviceToken(try await clients.create(name: "payees", scopes: ["payees:write"]))["access_token"])
            let payments = try #require(
                try await api.serviceToken(try await clients.create(name: "payments", scopes: ["payments:write"]))["access_token"]
            )
            _ = try await api.enrolled(TestKey())
            let user = try await api.signIn(installation: "phone-2")
            let account = try #require(try await api.call(.get, "/v1/me", token: user.access)["accountId"])
            #expect(try await api.registerPayee("shop-1", name: "Shop One", token: payees).status == 201)
            let before = try await api.snapshot()

            #expect(try await api.servicePayment(account: account, payee: "nobody-9", key: "k1", token: payments).code == "payee_not_registered")
            #expect(try await api.servicePayment(account: "no-such-account", payee: "shop-1", key: "k2", token: payments).code == "account_not_found")
            #expect(try await api.servicePayment(account: account, payee: "shop-1", key: "k3", token: payees).code == "insufficient_scope")
            #expect(try await api.servicePayment(account: account, payee: "shop-1", key: "k4", token: user.access).code == "invalid_service_token")
            #expect(try await api.registerPayee("shop-2", name: "Shop Two", token: payments).code == "insufficient_scope")
            // Latin "Cоffee" with a Cyrillic о: a look-alike is refused where it enters.
            #expect(try await api.registerPayee("shop-3", name: "C\u{043E}ffee", token: payees).code == "invalid_payee")
            #expect(try await api.registerPayee("shop 4", name: "Shop Four", token: payees).code == "invalid_payee")
            #expect(try await api.registerPayee("shop-5", name: "Shop Five", verification: "trusted", token: payees).code == "malformed_request")
            #expect(try await api.snapshot() == before)

            // The payment says whether the bank had verified its payee, so that the app can warn before the user pays.
            let toVerified = try await api.servicePayment(account: account, payee: "shop-1", key: "k6", token: payments)
            #expect(toVerified.status == 201 && toVerified.json["payeeVerified"] as? Bool == true, "\(toVerified.raw)")

            let renamed = try await api.registerPayee("shop-1", name: "Shop One Ltd", verification: "unverified", token: payees)
            #expect(renamed.status == 200 && renamed["name"] == "Shop One Ltd" && renamed["verification"] == "unverified")
            let toUnverified = try await api.servicePayment(account: account, payee: "shop-1", key: "k7", token: payments)
            #expect(toUnverified.json["payeeVerified"] as? Bool == false, "\(toUnverified.raw)")
            let read = try await api.call(.get, "/v1/payments/\(try #require(toUnverified["paymentId"]))", token: user.access)
            #expect(read.json["payeeVerified"] as? Bool == false, "as the customer's app reads it: \(read.raw)")
            let earlier = try await api.call(.get, "/v1/payments/\(try #require(toVerified["paymentId"]))", token: user.access)
            #expect(earlier.json["payeeVerified"] as? Bool == true, "a payment keeps the state its payee had when it was made")
        }
    }

    @Test("the status filter: a pending payment past its expiry is listed as expired, not pending")
    func statusFilter() async throws {
        try await TestServer.run { api in
            let user = try await api.enrolled(TestKey()).0
            let payment = try #require(try await api.createPayment(token: user.access)["paymentId"])
            api.clock.advance(by: 301)
            let fresh = try await api.signIn(installation: "phone-3")
            #expect(!(try await api.call(.get, "/v1/payments?status=pending", token: fresh.access).raw.contains(payment)))
            #expect(try await api.call(.get, "/v1/payments?status=expired", token: fresh.access).raw.contains(payment))
            #expect(try await api.call(.get, "/v1/payments?status=bogus", token: fresh.access).code == "malformed_request")
        }
    }
}

extension API {
    func registerPayee(_ id: String, name: String, verification: String = "verified", token: String) async throws -> Reply {
        try await call(.post, "/v1/service/payees", json: ["payeeId": id, "name": name, "verification": verification], token: token)
    }

    func servicePayment(account: String, payee: String, amountMinor: Int = 8800, key: String, token: String) async throws -> Reply {
        try await call(
            .post,
            "/v1/service/payments",
            json: ["accountId": account, "amountMinor": amountMinor, "currency": "CNY", "payeeId": payee],
            token: token,
            headers: [HTTPField.Name("Idempotency-Key")!: key]
        )
    }
}
