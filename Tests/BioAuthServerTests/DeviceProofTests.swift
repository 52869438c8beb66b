import BioAuthCore
import Foundation
import SQLKit
import Testing

@testable import BioAuthServer

/// The one device-proof step every ceremony takes (`BioAuthService+DeviceProof.swift`): what a refused proof leaves behind is
/// the ceremony's own, never another's.
@Suite("Device proofs: each ceremony records its own refusals")
struct DeviceProofTests {
    @Test(
        "a revoked device's proof is refused in every ceremony and audited as that ceremony (a payment's counts toward its lock)",
        arguments: StorageBackend.available
    )
    func revokedDeviceInEachCeremony(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let client = try await ApprovalTests.callCentre(api)
            let key = TestKey()
            let (user, deviceID) = try await api.enrolled(key)
            // Every ceremony's challenge, issued while the device is still bound.
            let signInChallenge = try await api.signInChallenge(key)
            let payment = try await api.createPayment(token: user.access)
            let paymentID = try #require(payment["paymentId"])
            let paymentChallenge = try await api.call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": key.keyID], token: user.access)
            let pinChallenge = try await api.call(.post, "/v1/me/payment-pin/challenges", json: ["keyId": key.keyID], token: user.access)
            let asked = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Raise the daily limit to ¥50,000"])
            #expect(asked.status == 200, "\(asked.raw)")
            let request = try #require(try await api.pendingApprovals(user.access).first)

            // Revoked from the phone itself: its own session stays, so each ceremony can still be tried with the key.
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: user.access).status == 204)

            let signIn = try await api.biometricSignIn(key, counter: 1, challenge: signInChallenge)
            let paid = try await api.authorizeWithBiometrics(payment, key: key, counter: 2, token: user.access, challenge: paymentChallenge)
            let approved = try await api.approve(request, key: key, counter: 3, token: user.access)
            let pinProof: [String: any Sendable] = [
                "challengeId": try #require(pinChallenge["challengeId"]), "keyId": key.keyID, "counter": 4,
                "signature": try key.sign(.paymentPIN, challenge: try #require(pinChallenge["challenge"]), counter: 4),
            ]
            let pin = try await api.call(.put, "/v1/me/payment-pin", json: ["pin": "739184", "biometric": pinProof], token: user.access)
            for (name, reply) in [("sign-in", signIn), ("payment", paid), ("approval", approved), ("PIN", pin)] {
                #expect(reply.status == 403 && reply.code == "device_revoked", "\(name): \(reply.raw)")
            }

            // One refusal each, under the ceremony's own kind: none of them is a failed sign-in but the sign-in's.
            let refused = try await api.auditEvents(code: "device_revoked", of: user.access)
            #expect(refused.map(\.kind).sorted() == ["approval_approved", "biometric_sign_in", "payment_authorized", "payment_pin_set"])
            #expect(refused.allSatisfy { !$0.succeeded && $0.deviceID == deviceID })
            #expect(refused.first { $0.kind == "payment_authorized" }?.paymentID == paymentID)
            // The payment's refusal counts toward its lock; it is still pending, the request still waits for an answer.
            let after = try await api.call(.get, "/v1/payments/\(paymentID)", token: user.access)
            #expect(after["status"] == "pending" && after.json["failedAttempts"] as? Int == 1, "\(after.raw)")
            #expect(try await api.pendingApprovals(user.access).count == 1)
        }
    }

    @Test("another customer's key is unknown to this customer: refused as not found, and nothing is audited on its account")
    func anotherAccountsKey() async throws {
        try await TestServer.run { api in
            let bobKey = TestKey()
            let (bob, bobDevice) = try await api.enrolled(bobKey, username: "bob", installation: "phone-bob")
            #expect(try await api.call(.delete, "/v1/devices/\(bobDevice)", token: bob.access).status == 204)
            let (alice, _) = try await api.enrolled(TestKey())
            let payment = try await api.createPayment(token: alice.access)
            let paymentID = try #require(payment["paymentId"])
            for path in ["/v1/payments/\(paymentID)/challenges", "/v1/me/payment-pin/challenges"] {
                let reply = try await api.call(.post, path, json: ["keyId": bobKey.keyID], token: alice.access)
                #expect(reply.status == 404 && reply.code == "device_not_found", "\(path): \(reply.raw)")
            }
            #expect(try await api.auditEvents(code: "device_revoked", of: bob.access).isEmpty, "recorded on Bob's account")
            #expect(try await api.auditEvents(code: "device_revoked", of: alice.access).isEmpty, "recorded on Alice's account")
        }
    }
}

extension API {
    /// The audit events of the account signed in with `token` whose code is `code`, oldest first.
    func auditEvents(code: String, of token: String) async throws -> [AuditEvent] {
        let account = try #require(try await call(.get, "/v1/me", token: token)["accountId"])
        return try await database.transaction { db in
            try await db.auditEvents.page(account: account, limit: 200, before: nil).events.filter { $0.code == code }.reversed()
        }
    }
}
