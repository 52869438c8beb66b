import BioAuthCore
import Foundation
import HummingbirdTesting
import Logging
import Testing

@Suite("Payments")
struct PaymentTests {
    /// An account with a bound device key, a payment PIN and a pending ¥88.00 payment to Coffee Shop.
    struct Setup {
        let key: TestKey
        let token: String
        let payment: Reply
    }

    static func setUp(_ api: API) async throws -> Setup {
        let key = TestKey()
        _ = try await api.enrolled(key)
        let signedIn = try await api.biometricSignIn(key, counter: 1)
        let token = Tokens(signedIn).access
        #expect(try await api.setPIN(token: token).status == 204)
        let payment = try await api.createPayment(token: token)
        try #require(payment.status == 201, "create payment: \(payment.raw)")
        return Setup(key: key, token: token, payment: payment)
    }

    @Test("create → challenge → sign amount and payee → authorized once, with a receipt that verifies offline")
    func happyPath() async throws {
        try await TestServer.run { api in
            let setup = try await Self.setUp(api)
            #expect(setup.payment["status"] == "pending")
            #expect(setup.payment.json["amountMinor"] as? Int == 8800 && setup.payment.json["currencyExponent"] as? Int == 2)
            let challenge = try await api.call(
                .post,
                "/v1/payments/\((try #require(setup.payment["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            #expect(challenge["purpose"] == "payment" && challenge["paymentId"] == setup.payment["paymentId"])
            let authorized = try await api.authorizeWithBiometrics(
                setup.payment,
                key: setup.key,
                counter: 2,
                token: setup.token,
                challenge: challenge
            )
            #expect(authorized.status == 200, "\(authorized.raw)")
            #expect(authorized["status"] == "authorized" && authorized["authorizationMethod"] == "biometric")

            // The client reads the receipt and checks it against the published key, offline.
            let keys = try await api.call(.get, "/v1/receipt-keys")
            let published = try #require((keys.json["keys"] as? [[String: Any]])?.first?["publicKey"] as? String)
            let serverKey = try DevicePublicKey(x963Representation: try #require(Base64URL.decode(published)))
            let receiptJSON = try JSONSerialization.data(withJSONObject: try #require(authorized.json["receipt"]))
            let receipt = try JSONDecoder().decode(PaymentReceipt.self, from: receiptJSON)
            #expect(receipt.isValid(signedBy: serverKey))
            #expect(receipt.amountMinor == 8800 && receipt.currency == "CNY" && receipt.payeeName == "Coffee Shop" && receipt.method == "biometric")
            // The receipt carries the exponent the hash covers, so a verifier in another language needs no ISO table.
            #expect((authorized.json["receipt"] as? [String: Any])?["currencyExponent"] as? Int == 2)
            var changed = receipt
            changed.amountMinor = 88
            #expect(!changed.isValid(signedBy: serverKey))
            changed = receipt
            changed.payeeName = "Evil Shop"
            #expect(!changed.isValid(signedBy: serverKey))

            // A retry after a lost response: read the state.
            let read = try await api.call(.get, "/v1/payments/\((try #require(setup.payment["paymentId"])))", token: setup.token)
            #expect(read["status"] == "authorized" && (read.json["receipt"] as? [String: Any])?["signature"] as? String == receipt.signature)
            let again = try await api.call(
                .post,
                "/v1/payments/\((try #require(setup.payment["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            #expect(again.status == 409 && again.code == "payment_already_authorized")
            let list = try await api.call(.get, "/v1/payments", token: setup.token)
            #expect((list.json["payments"] as? [[String: Any]])?.count == 1)

            // A receipt an earlier version stored without the exponent is served with it, and still verifies.
            let paymentID = try #require(setup.payment["paymentId"])
            var stored = try #require(try JSONSerialization.jsonObject(with: receiptJSON) as? [String: Any])
            stored["currencyExponent"] = nil
            let legacy = try #require(String(data: try JSONSerialization.data(withJSONObject: stored), encoding: .utf8))
            try await api.database.transaction { db in
                try await db.raw("UPDATE payments SET receipt = \(bind: legacy) WHERE id = \(bind: paymentID)").run()
            }
            let served = try await api.call(.get, "/v1/payments/\(paymentID)", token: setup.token)
            let servedReceipt = try #require(served.json["receipt"] as? [String: Any])
            #expect(servedReceipt["currencyExponent"] as? Int == 2)
            let reread = try JSONDecoder().decode(PaymentReceipt.self, from: try JSONSerialization.data(withJSONObject: servedReceipt))
            #expect(reread == receipt && reread.isValid(signedBy: serverKey))
        }
    }

    @Test("tampered amount, currency, payee or payment id: refused as a transaction mismatch")
    func tampering() async throws {
        try await TestServer.run { api in
            let setup = try await Self.setUp(api)
            let other = try await api.createPayment(token: setup.token, amountMinor: 100)
            let otherID = try #require(other["paymentId"])
            var counter: UInt64 = 2
            let tampers: [(String, (inout (paymentID: String, amount: Int64, currency: String, payeeID: String, payeeName: String)) -> Void)] = [
                ("amount", { $0.amount = 880 }),
                ("currency", { $0.currency = "HKD" }),
                ("payee id", { $0.payeeID = "merchant-evil" }),
                ("payee name", { $0.payeeName = "Coffee Shop Ltd" }),
                ("payment id", { $0.paymentID = otherID }),
            ]
            for (name, tamper) in tampers {
                let reply = try await api.authorizeWithBiometrics(setup.payment, key: setup.key, counter: counter, token: setup.token, tamper: tamper)
                #expect(reply.status == 401 && reply.code == "transaction_mismatch", "\(name): \(reply.raw)")
                counter += 1
            }
            // Five failed authorizations lock the payment.
            let locked = try await api.call(.get, "/v1/payments/\((try #require(setup.payment["paymentId"])))", token: setup.token)
            #expect(locked["status"] == "locked" && locked.json["failedAttempts"] as? Int == 5)
            let honest = try await api.call(
                .post,
                "/v1/payments/\((try #require(setup.payment["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            #expect(honest.status == 423 && honest.code == "payment_locked")
            #expect(try await api.auditKinds().contains("payment_locked:success"))
        }
    }

    @Test("a sign-in signature, a replay and another payment's challenge are each refused with their own code")
    func wrongSignatures() async throws {
        try await TestServer.run { api in
            let setup = try await Self.setUp(api)
            let login = try await api.authorizeWithBiometrics(setup.payment, key: setup.key, counter: 2, token: setup.token, purpose: .login)
            #expect(login.code == "signature_purpose_mismatch")

            let other = try await api.createPayment(token: setup.token, amountMinor: 100)
            let otherChallenge = try await api.call(
                .post,
                "/v1/payments/\((try #require(other["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            let crossed = try await api.authorizeWithBiometrics(
                setup.payment,
                key: setup.key,
                counter: 3,
                token: setup.token,
                challenge: otherChallenge
            )
            #expect(crossed.code == "challenge_mismatch")

            let challenge = try await api.call(
                .post,
                "/v1/payments/\((try #require(other["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            let forged = try await api.authorizeWithBiometrics(other, key: TestKey(), counter: 4, token: setup.token, challenge: challenge)
            #expect(forged.code == "device_not_found")
            #expect(try await api.authorizeWithBiometrics(other, key: setup.key, counter: 5, token: setup.token, challenge: challenge).status == 200)
            let replay = try await api.authorizeWithBiometrics(other, key: setup.key, counter: 6, token: setup.token, challenge: challenge)
            #expect(replay.code == "payment_already_authorized")
            let secondPayment = try await api.createPayment(token: setup.token, amountMinor: 300)
            let fresh = try await api.call(
                .post,
                "/v1/payments/\((try #require(secondPayment["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            #expect(
                try await api.authorizeWithBiometrics(secondPayment, key: setup.key, counter: 7, token: setup.token, challenge: fresh).status == 200
            )
            let thirdPayment = try await api.createPayment(token: setup.token, amountMinor: 400)
            let usedForThird = try await api.authorizeWithBiometrics(thirdPayment, key: setup.key, counter: 8, token: setup.token, challenge: fresh)
            #expect(usedForThird.code == "challenge_mismatch")
        }
    }

    @Test("a replayed authorization of a pending payment is refused as a used challenge")
    func replayWhilePending() async throws {
        try await TestServer.run(
            configure: { $0.maxFailedPaymentAttempts = 5 },
            { api in
                let setup = try await Self.setUp(api)
                let paymentID = (try #require(setup.payment["paymentId"]))
                let challenge = try await api.call(
                    .post,
                    "/v1/payments/\(paymentID)/challenges",
                    json: ["keyId": setup.key.keyID],
                    token: setup.token
                )
                // The first attempt signs a tampered amount and is refused, burning the challenge...
                _ = try await api.authorizeWithBiometrics(setup.payment, key: setup.key, counter: 2, token: setup.token, challenge: challenge) {
                    $0.amount = 1
                }
                // ...so the same challenge can't be used again.
                let replay = try await api.authorizeWithBiometrics(
                    setup.payment,
                    key: setup.key,
                    counter: 3,
                    token: setup.token,
                    challenge: challenge
                )
                #expect(replay.status == 409 && replay.code == "challenge_used")
            }
        )
    }

    @Test("50 concurrent biometric authorizations of one payment: exactly one succeeds, the rest are told it is authorized")
    func concurrentBiometric() async throws {
        try await TestServer.run(.live) { api in
            let setup = try await Self.setUp(api)
            let paymentID = (try #require(setup.payment["paymentId"]))
            var challenges: [Reply] = []
            for _ in 0..<50 {
                challenges.append(
                    try await api.call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": setup.key.keyID], token: setup.token)
                )
            }
            let prepared = challenges
            let codes = try await withThrowingTaskGroup(of: String.self) { group in
                for (index, challenge) in prepared.enumerated() {
                    group.addTask {
                        try await api.authorizeWithBiometrics(
                            setup.payment,
                            key: setup.key,
                            counter: UInt64(index + 2),
                            token: setup.token,
                            challenge: challenge
                        ).code ?? "authorized"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "authorized" }.count == 1)
            #expect(codes.filter { $0 == "payment_already_authorized" }.count == 49, "\(Set(codes))")
            #expect(try await api.auditKinds().filter { $0 == "payment_authorized:success" }.count == 1)
        }
    }

    @Test("50 concurrent PIN authorizations of one payment: exactly one succeeds")
    func concurrentPIN() async throws {
        try await TestServer.run(.live) { api in
            let setup = try await Self.setUp(api)
            let paymentID = (try #require(setup.payment["paymentId"]))
            let codes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await api.call(.post, "/v1/payments/\(paymentID)/pin-authorization", json: ["pin": "258046"], token: setup.token).code
                            ?? "authorized"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "authorized" }.count == 1)
            #expect(codes.filter { $0 == "payment_already_authorized" }.count == 49, "\(Set(codes))")
            let read = try await api.call(.get, "/v1/payments/\(paymentID)", token: setup.token)
            #expect(read["authorizationMethod"] == "pin")
        }
    }

    @Test("idempotency: same key and body → the first response; same key, other body → refused; keys are per account")
    func idempotency() async throws {
        try await TestServer.run { api in
            let setup = try await Self.setUp(api)
            let first = try await api.createPayment(token: setup.token, amountMinor: 500, idempotencyKey: "order-1001")
            let again = try await api.createPayment(token: setup.token, amountMinor: 500, idempotencyKey: "order-1001")
            #expect(again.status == 201 && again["paymentId"] == first["paymentId"])
            #expect(again.raw == first.raw)
            // Still the first response after the payment moved on.
            _ = try await api.call(
                .post,
                "/v1/payments/\((try #require(first["paymentId"])))/pin-authorization",
                json: ["pin": "258046"],
                token: setup.token
            )
            let later = try await api.createPayment(token: setup.token, amountMinor: 500, idempotencyKey: "order-1001")
            #expect(later.raw == first.raw && later["status"] == "pending")
            let otherBody = try await api.createPayment(token: setup.token, amountMinor: 501, idempotencyKey: "order-1001")
            #expect(otherBody.status == 422 && otherBody.code == "idempotency_key_reused")
            let otherMemo = try await api.createPayment(token: setup.token, amountMinor: 500, memo: "latte", idempotencyKey: "order-1001")
            #expect(otherMemo.code == "idempotency_key_reused")
            // Another account may use the same key for its own payment.
            try await api.createAccount("bob")
            let bob = try await api.signIn("bob", installation: "bob-phone")
            let bobs = try await api.createPayment(token: bob.access, amountMinor: 500, idempotencyKey: "order-1001")
            #expect(bobs.status == 201 && bobs["paymentId"] != first["paymentId"])
            #expect(try await api.call(.get, "/v1/payments/\((try #require(first["paymentId"])))", token: bob.access).code == "payment_not_found")
            // The header is required: its absence has the documented code, as an unfit key has.
            let missing = try await api.call(
                .post,
                "/v1/payments",
                json: ["amountMinor": 1, "currency": "CNY", "payeeId": "m", "payeeName": "M"],
                token: setup.token
            )
            #expect(missing.status == 400 && missing.code == "invalid_idempotency_key", "\(missing.raw)")
        }
    }

    @Test("5 wrong PINs lock PIN payments for the configured time; the PIN is the fallback when biometrics fail")
    func pinLockout() async throws {
        try await TestServer.run(
            configure: {
                $0.pinLockDuration = 1800
                $0.accessTokenLifetime = 7200
            },
            { api in
                let setup = try await Self.setUp(api)
                let paymentID = (try #require(setup.payment["paymentId"]))
                for attempt in 1...5 {
                    let reply = try await api.call(.post, "/v1/payments/\(paymentID)/pin-authorization", json: ["pin": "111112"], token: setup.token)
                    #expect(reply.code == (attempt < 5 ? "wrong_pin" : "pin_locked"), "attempt \(attempt): \(reply.raw)")
                }
                // The payment itself is locked after five failures; a new one can't use the PIN while it is locked.
                #expect(try await api.call(.get, "/v1/payments/\(paymentID)", token: setup.token)["status"] == "locked")
                let next = try await api.createPayment(token: setup.token, amountMinor: 1200)
                let refused = try await api.call(
                    .post,
                    "/v1/payments/\((try #require(next["paymentId"])))/pin-authorization",
                    json: ["pin": "258046"],
                    token: setup.token
                )
                #expect(refused.status == 423 && refused.code == "pin_locked")
                // Biometrics still work meanwhile.
                let byFace = try await api.createPayment(token: setup.token, amountMinor: 1300)
                #expect(try await api.authorizeWithBiometrics(byFace, key: setup.key, counter: 2, token: setup.token).status == 200)
                api.clock.advance(by: 1801)
                let later = try await api.createPayment(token: setup.token, amountMinor: 1400)
                let paid = try await api.call(
                    .post,
                    "/v1/payments/\((try #require(later["paymentId"])))/pin-authorization",
                    json: ["pin": "258046"],
                    token: setup.token
                )
                #expect(paid.status == 200 && paid["authorizationMethod"] == "pin")
                #expect(try await api.auditKinds().contains("payment_pin_locked:success"))
            }
        )
    }

    @Test("setting the PIN: password or a fresh biometric signature; weak and malformed PINs refused")
    func settingThePIN() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let payment = try await api.createPayment(token: tokens.access)
            #expect(
                try await api.call(
                    .post,
                    "/v1/payments/\((try #require(payment["paymentId"])))/pin-authorization",
                    json: ["pin": "258046"],
                    token: tokens.access
                ).code == "pin_not_set"
            )
            for (pin, code) in [
                ("12345", "invalid_pin"), ("1234567", "invalid_pin"), ("12a456", "invalid_pin"), ("１２３４５６", "invalid_pin"),
                ("000000", "weak_pin"), ("123456", "weak_pin"), ("987654", "weak_pin"),
            ] {
                #expect(try await api.setPIN(pin, token: tokens.access).code == code, "\(pin)")
            }
            #expect(try await api.setPIN(token: tokens.access, password: "wrong password").code == "invalid_credentials")
            let both = try await api.call(.put, "/v1/me/payment-pin", json: ["pin": "258046"], token: tokens.access)
            #expect(both.code == "malformed_request")
            #expect(try await api.setPIN("258046", token: tokens.access).status == 204)

            // Changing it with Face ID instead of the password.
            let challenge = try await api.call(.post, "/v1/me/payment-pin/challenges", json: ["keyId": key.keyID], token: tokens.access)
            #expect(challenge["purpose"] == "pin")
            let proof: [String: any Sendable] = [
                "challengeId": (try #require(challenge["challengeId"])), "keyId": key.keyID, "counter": 1,
                "signature": try key.sign(.paymentPIN, challenge: (try #require(challenge["challenge"])), counter: 1),
            ]
            #expect(try await api.call(.put, "/v1/me/payment-pin", json: ["pin": "739184", "biometric": proof], token: tokens.access).status == 204)
            #expect(
                try await api.call(.put, "/v1/me/payment-pin", json: ["pin": "739185", "biometric": proof], token: tokens.access).code
                    == "challenge_used"
            )
            let loginSigned = try await api.call(.post, "/v1/me/payment-pin/challenges", json: ["keyId": key.keyID], token: tokens.access)
            let wrongPurpose: [String: any Sendable] = [
                "challengeId": (try #require(loginSigned["challengeId"])), "keyId": key.keyID, "counter": 2,
                "signature": try key.sign(.login, challenge: (try #require(loginSigned["challenge"])), counter: 2),
            ]
            #expect(
                try await api.call(.put, "/v1/me/payment-pin", json: ["pin": "739185", "biometric": wrongPurpose], token: tokens.access).code
                    == "signature_purpose_mismatch"
            )
            let paid = try await api.call(
                .post,
                "/v1/payments/\((try #require(payment["paymentId"])))/pin-authorization",
                json: ["pin": "739184"],
                token: tokens.access
            )
            #expect(paid.status == 200)
        }
    }

    @Test(
        "a payment past its expiry gets no challenge and is not authorized with an earlier one; it is stored as expired",
        arguments: StorageBackend.available
    )
    func challengeAfterExpiry(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let setup = try await Self.setUp(api)
            let paymentID = try #require(setup.payment["paymentId"])
            let path = "/v1/payments/\(paymentID)/challenges"
            let issued = try await api.call(.post, path, json: ["keyId": setup.key.keyID], token: setup.token)
            #expect(issued.status == 201)
            api.clock.advance(by: 301)
            for _ in 0..<2 {
                let late = try await api.call(.post, path, json: ["keyId": setup.key.keyID], token: setup.token)
                #expect(late.status == 410 && late.code == "payment_expired")
            }
            // The challenge issued in time does not authorize it either.
            let authorized = try await api.authorizeWithBiometrics(setup.payment, key: setup.key, counter: 2, token: setup.token, challenge: issued)
            #expect(authorized.status == 410 && authorized.code == "payment_expired")
            let (status, challenges) = try await api.database.transaction { db in
                (
                    try await db.raw("SELECT status FROM payments WHERE id = \(bind: paymentID)").first()?.decode(column: "status", as: String.self),
                    try await db.raw("SELECT COUNT(*) AS n FROM challenges WHERE payment_id = \(bind: paymentID)").first()?.decode(
                        column: "n",
                        as: Int.self
                    )
                )
            }
            #expect(status == "expired", "stored as expired, not only shown so")
            #expect(challenges == 1, "no challenge issued after the expiry")
        }
    }

    @Test("a pending payment expires after 5 minutes; cancelling works only while pending")
    func expiryAndCancellation() async throws {
        try await TestServer.run { api in
            let setup = try await Self.setUp(api)
            let paymentID = (try #require(setup.payment["paymentId"]))
            api.clock.advance(by: 299)
            #expect(try await api.call(.get, "/v1/payments/\(paymentID)", token: setup.token)["status"] == "pending")
            api.clock.advance(by: 2)
            #expect(try await api.call(.get, "/v1/payments/\(paymentID)", token: setup.token)["status"] == "expired")
            let late = try await api.call(.post, "/v1/payments/\(paymentID)/pin-authorization", json: ["pin": "258046"], token: setup.token)
            #expect(late.status == 410 && late.code == "payment_expired")
            #expect(try await api.call(.post, "/v1/payments/\(paymentID)/cancellation", token: setup.token).code == "payment_expired")

            let second = try await api.createPayment(token: setup.token, amountMinor: 100)
            let challenge = try await api.call(
                .post,
                "/v1/payments/\((try #require(second["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            let cancelled = try await api.call(.post, "/v1/payments/\((try #require(second["paymentId"])))/cancellation", token: setup.token)
            #expect(cancelled.status == 200 && cancelled["status"] == "cancelled")
            let afterCancel = try await api.authorizeWithBiometrics(second, key: setup.key, counter: 2, token: setup.token, challenge: challenge)
            #expect(afterCancel.status == 409 && afterCancel.code == "payment_cancelled")
            #expect(
                try await api.call(.post, "/v1/payments/\((try #require(second["paymentId"])))/cancellation", token: setup.token).code
                    == "payment_cancelled"
            )

            // A payment challenge never outlives its payment.
            let third = try await api.createPayment(token: setup.token, amountMinor: 100)
            api.clock.advance(by: 250)
            let short = try await api.call(
                .post,
                "/v1/payments/\((try #require(third["paymentId"])))/challenges",
                json: ["keyId": setup.key.keyID],
                token: setup.token
            )
            #expect(short["expiresAt"] == third["expiresAt"])
            #expect(try await api.auditKinds().contains("payment_cancelled:success"))
        }
    }

    @Test("malformed payments are refused with their code and change nothing")
    func malformedPayments() async throws {
        try await TestServer.run { api in
            let setup = try await Self.setUp(api)
            try await api.registerPayeeIfValid("m-1", name: "Shop")
            let before = try await api.snapshot()
            let cases: [(Int, String, String, String, String?, String)] = [
                (0, "CNY", "m-1", "Shop", nil, "invalid_amount"),
                (-5, "CNY", "m-1", "Shop", nil, "invalid_amount"),
                (100, "cny", "m-1", "Shop", nil, "invalid_currency"),
                (100, "XAU", "m-1", "Shop", nil, "invalid_currency"),
                (100, "CNY", "m 1", "Shop", nil, "invalid_payee"),
                (100, "CNY", "m-1", "Shop\u{202E}", nil, "invalid_payee"),
                (100, "CNY", "m-1", "", nil, "invalid_payee"),
                (100, "CNY", "m-1", String(repeating: "S", count: 65), nil, "invalid_payee"),
                (100, "CNY", "m-1", "Shop", String(repeating: "m", count: 141), "invalid_memo"),
                (100, "CNY", "m-1", "Shop", "line\u{0}break", "invalid_memo"),
            ]
            for (amount, currency, payee, name, memo, code) in cases {
                let reply = try await api.createPayment(
                    token: setup.token,
                    amountMinor: amount,
                    currency: currency,
                    payeeID: payee,
                    payeeName: name,
                    memo: memo
                )
                #expect(reply.code == code, "\(amount) \(currency) \(payee) \(name.debugDescription): \(reply.raw)")
            }
            #expect(
                try await api.createPayment(token: setup.token, idempotencyKey: String(repeating: "k", count: 129)).code == "invalid_idempotency_key"
            )
            let id = (try #require(setup.payment["paymentId"]))
            #expect(try await api.call(.post, "/v1/payments/\(id)/pin-authorization", json: ["pin": "12"], token: setup.token).code == "invalid_pin")
            let badHash = try await api.call(
                .post,
                "/v1/payments/\(id)/biometric-authorization",
                json: [
                    "challengeId": "x", "keyId": setup.key.keyID, "counter": 1, "transactionHash": "AAAA", "signature": "AA",
                ],
                token: setup.token
            )
            #expect(badHash.code == "invalid_encoding")
            #expect(try await api.call(.get, "/v1/payments/not-a-payment", token: setup.token).code == "payment_not_found")
            #expect(try await api.snapshot() == before)
        }
    }

    @Test("no PIN, password or token is in the database or the logs")
    func noSecrets() async throws {
        let sink = LogSink()
        try await TestServer.run(logLevel: .trace, logSink: sink) { api in
            let setup = try await Self.setUp(api)
            _ = try await api.call(
                .post,
                "/v1/payments/\((try #require(setup.payment["paymentId"])))/pin-authorization",
                json: ["pin": "258046"],
                token: setup.token
            )
            _ = try await api.call(
                .post,
                "/v1/payments/\(try await api.createPayment(token: setup.token)["paymentId"]!)/pin-authorization",
                json: ["pin": "640213"],
                token: setup.token
            )
            let database = try await api.snapshot().values.flatMap { $0 }.flatMap { $0.values }.joined(separator: "\n")
            for secret in ["258046", "640213", "correct horse", setup.token] {
                #expect(!database.contains(secret), "the database holds a secret")
                #expect(!sink.text.contains(secret), "the logs hold a secret")
            }
            #expect(sink.text.contains("pin-authorization"))
        }
    }
}
