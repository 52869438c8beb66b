import BioAuthCore
import Crypto
import Foundation
import HummingbirdTesting
import Testing

@Suite("Device binding and biometric sign-in: attacks refused")
struct BiometricSecurityTests {
    @Test("a replayed sign-in (the same challenge and signature again) is refused and audited")
    func replay() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let signature = try key.sign(.login, challenge: try #require(challenge["challenge"]), counter: 1)
            let request: [String: any Sendable] = [
                "challengeId": try #require(challenge["challengeId"]), "keyId": key.keyID, "counter": 1, "signature": signature,
            ]
            #expect(try await api.call(.post, "/v1/sessions/biometric", json: request).status == 201)
            let replay = try await api.call(.post, "/v1/sessions/biometric", json: request)
            #expect(replay.status == 409 && replay.code == "challenge_used")
            #expect(try await api.auditKinds().contains("challenge_replay:failure"))
        }
    }

    @Test("an expired challenge is refused (about 2 minutes)")
    func expired() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            api.clock.advance(by: 121)
            let reply = try await api.biometricSignIn(key, counter: 1, challenge: challenge)
            #expect(reply.status == 400 && reply.code == "challenge_expired")
            // A fresh challenge works.
            #expect(try await api.biometricSignIn(key, counter: 1).status == 201)
        }
    }

    @Test("a signature by another key is refused, and burns the challenge")
    func anotherKey() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let forged = try await api.biometricSignIn(key, counter: 1, signer: TestKey(), challenge: challenge)
            #expect(forged.status == 401 && forged.code == "invalid_signature")
            // The genuine key can't reuse that challenge afterwards.
            #expect(try await api.biometricSignIn(key, counter: 1, challenge: challenge).code == "challenge_used")
            #expect(try await api.auditKinds().contains("biometric_sign_in:failure"))
        }
    }

    @Test("a signature for another purpose is refused with its own code, both ways")
    func anotherPurpose() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let asRegister = try await api.biometricSignIn(key, counter: 1, purpose: .register)
            #expect(asRegister.status == 401 && asRegister.code == "signature_purpose_mismatch")
            let otherKey = TestKey()
            let asLogin = try await api.register(otherKey, token: tokens.access, purpose: .login)
            #expect(asLogin.code == "signature_purpose_mismatch")
        }
    }

    @Test("a counter that does not increase is refused and audited as a cloned-key signal")
    func counter() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            #expect(try await api.biometricSignIn(key, counter: 5).status == 201)
            let same = try await api.biometricSignIn(key, counter: 5)
            #expect(same.status == 401 && same.code == "counter_not_increasing")
            #expect(try await api.biometricSignIn(key, counter: 4).code == "counter_not_increasing")
            #expect(try await api.biometricSignIn(key, counter: 6).status == 201)
            #expect(try await api.auditKinds().filter { $0 == "counter_regression:failure" }.count == 2)
        }
    }

    @Test(
        "a refused sign-in or authorization moves no counter and leaves one audit event: the unit that advanced it first is undone whole",
        arguments: StorageBackend.available
    )
    func refusalsMoveNoCounter(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            #expect(try await api.biometricSignIn(key, counter: 5).status == 201)
            let before = try await api.auditKinds().count
            // A forged signature with a higher counter: refused, and the counter stays at 5.
            #expect(try await api.biometricSignIn(key, counter: 9, signer: TestKey()).code == "invalid_signature")
            #expect(try await api.auditKinds().dropFirst(before) == ["biometric_sign_in:failure"])
            // Another account's challenge, signed with a higher counter: refused, not used up, no counter moved.
            let bob = TestKey()
            _ = try await api.enrolled(bob, username: "bob", installation: "phone-2")
            let bobChallenge = try await api.signInChallenge(bob)
            #expect(try await api.biometricSignIn(key, counter: 8, challenge: bobChallenge).code == "challenge_mismatch")
            #expect(try await api.biometricSignIn(bob, counter: 1, challenge: bobChallenge).status == 201)
            let signedIn = try await api.biometricSignIn(key, counter: 6)
            #expect(signedIn.status == 201)
            let tokens = Tokens(signedIn)

            // A payment signed over another amount with a higher counter: refused, counted once, no counter moved.
            let payment = try await api.createPayment(token: tokens.access)
            let tampered = try await api.authorizeWithBiometrics(payment, key: key, counter: 20, token: tokens.access) { $0.amount += 1 }
            #expect(tampered.code == "transaction_mismatch")
            let failed = try await api.call(.get, "/v1/payments/\(try #require(payment["paymentId"]))", token: tokens.access)
            #expect(failed.json["failedAttempts"] as? Int == 1)
            #expect(try await api.authorizeWithBiometrics(payment, key: key, counter: 7, token: tokens.access).status == 200)
        }
    }

    @Test("the largest counter (2^63 - 1) signs in once; nothing can follow it, and nothing larger can be sent")
    func counterCeiling() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            #expect(try await api.biometricSignIn(key, counter: SignedPayload.maxCounter - 1).status == 201)
            #expect(try await api.biometricSignIn(key, counter: SignedPayload.maxCounter).status == 201)
            #expect(try await api.biometricSignIn(key, counter: SignedPayload.maxCounter).code == "counter_not_increasing")
            let challenge = try await api.signInChallenge(key)
            let tooLarge =
                #"{"challengeId":"\#(challenge["challengeId"] ?? "")","keyId":"\#(key.keyID)","counter":9223372036854775808,"signature":"AA"}"#
            #expect(try await api.call(.post, "/v1/sessions/biometric", body: tooLarge).code == "malformed_request")
        }
    }

    /// The other valid ECDSA signature over the same payload: (r, n − s).
    static func highSTwin(_ base64url: String) throws -> String {
        let signature = try P256.Signing.ECDSASignature(derRepresentation: try #require(Base64URL.decode(base64url)))
        let raw = [UInt8](signature.rawRepresentation)
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        var twinS = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(order[index]) - Int(raw[32 + index]) - borrow
            twinS[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        let twin = try P256.Signing.ECDSASignature(rawRepresentation: Data(raw[0..<32] + twinS))
        return Base64URL.encode(twin.derRepresentation)
    }

    @Test("a high-S twin of a used signature is a replay like any other: refused, no session (malleability decided)")
    func highS() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let signature = try key.sign(.login, challenge: try #require(challenge["challenge"]), counter: 1)
            let twin = try Self.highSTwin(signature)
            #expect(twin != signature)
            func send(_ signature: String, counter: Int = 1) async throws -> Reply {
                try await api.call(
                    .post,
                    "/v1/sessions/biometric",
                    json: [
                        "challengeId": try #require(challenge["challengeId"]), "keyId": key.keyID, "counter": counter, "signature": signature,
                    ]
                )
            }
            #expect(try await send(signature).status == 201)
            // Same payload, other valid signature bytes: the single-use challenge refuses it.
            #expect(try await send(twin).code == "challenge_used")
            #expect(try await send(twin, counter: 2).code == "challenge_used")
            // Both forms verify (the Secure Enclave does not normalize S): a fresh challenge accepts a high-S signature.
            let next = try await api.signInChallenge(key)
            let fresh = try Self.highSTwin(try key.sign(.login, challenge: try #require(next["challenge"]), counter: 2))
            let accepted = try await api.call(
                .post,
                "/v1/sessions/biometric",
                json: [
                    "challengeId": try #require(next["challengeId"]), "keyId": key.keyID, "counter": 2, "signature": fresh,
                ]
            )
            #expect(accepted.status == 201)
            #expect(try await api.auditKinds().filter { $0 == "challenge_replay:failure" }.count == 2)
        }
    }

    @Test("a revoked device's key is refused at once, and its sessions end")
    func revoked() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, deviceID) = try await api.enrolled(key)
            let biometric = Tokens(try await api.biometricSignIn(key, counter: 1))
            let other = try await api.signIn(installation: "laptop")
            // Revoking another device needs a fresh device key in the session asking (docs/PROTOCOL.md, "Step-up").
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: other.access).code == "step_up_required")
            #expect(try await api.stepUp(key, counter: 2, session: other).status == 200)
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: other.access).status == 204)
            #expect(try await api.call(.get, "/v1/me", token: biometric.access).code == "session_ended")
            #expect(try await api.call(.get, "/v1/me", token: tokens.access).code == "session_ended")
            #expect(try await api.call(.get, "/v1/me", token: other.access).status == 200)
            let challenge = try await api.signInChallenge(key)
            #expect(challenge.status == 403 && challenge.code == "device_revoked")
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: other.access).status == 204)
        }
    }

    @Test("revoking from the phone itself keeps the asking session, ends the device's others, and refuses the key")
    func selfRevocation() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (_, deviceID) = try await api.enrolled(key)
            let biometric = Tokens(try await api.biometricSignIn(key, counter: 1))
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: biometric.access).status == 204)
            #expect(try await api.call(.get, "/v1/me", token: biometric.access).status == 200)
            #expect(try await api.signInChallenge(key).code == "device_revoked")
        }
    }

    @Test("a challenge only serves what it was issued for")
    func challengeBinding() async throws {
        try await TestServer.run { api in
            let alice = TestKey()
            let (aliceTokens, _) = try await api.enrolled(alice, username: "alice")
            let bob = TestKey()
            _ = try await api.enrolled(bob, username: "bob", installation: "phone-2")
            // Bob's login challenge used with Alice's key.
            let bobChallenge = try await api.signInChallenge(bob)
            #expect(try await api.biometricSignIn(alice, counter: 1, challenge: bobChallenge).code == "challenge_mismatch")
            // ...and it was not burnt: Bob can still use it.
            let bobSignIn = try await api.biometricSignIn(bob, counter: 1, challenge: bobChallenge)
            #expect(bobSignIn.status == 201)
            let bobTokens = Tokens(bobSignIn)
            // A registration challenge of Alice's session, used by Bob's session.
            let registration = try await api.call(.post, "/v1/devices/challenges", token: aliceTokens.access)
            let newKey = TestKey()
            let stolen = try await api.call(
                .post,
                "/v1/devices",
                json: [
                    "challengeId": try #require(registration["challengeId"]), "publicKey": newKey.publicKey, "keyId": newKey.keyID,
                    "biometryKind": "touchID", "deviceName": "x", "counter": 0,
                    "signature": try newKey.sign(.register, challenge: try #require(registration["challenge"]), counter: 0),
                ],
                token: bobTokens.access
            )
            #expect(stolen.code == "challenge_mismatch")
            // A sign-in challenge id can't register a device.
            let login = try await api.signInChallenge(alice)
            let wrongPurpose = try await api.call(
                .post,
                "/v1/devices",
                json: [
                    "challengeId": try #require(login["challengeId"]), "publicKey": newKey.publicKey, "keyId": newKey.keyID,
                    "biometryKind": "touchID", "deviceName": "x", "counter": 0,
                    "signature": try newKey.sign(.register, challenge: try #require(login["challenge"]), counter: 0),
                ],
                token: aliceTokens.access
            )
            #expect(wrongPurpose.code == "challenge_mismatch")
            #expect(try await api.biometricSignIn(alice, counter: 1, challenge: try await api.signInChallenge(alice)).status == 201)
        }
    }

    @Test("registration: a key is bound once; its key id must be its own hash; an unknown key gets no challenge")
    func registrationRules() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            #expect(try await api.register(key, token: tokens.access).code == "key_already_registered")
            let other = TestKey()
            let challenge = try await api.call(.post, "/v1/devices/challenges", token: tokens.access)
            let mismatched = try await api.call(
                .post,
                "/v1/devices",
                json: [
                    "challengeId": try #require(challenge["challengeId"]), "publicKey": other.publicKey, "keyId": key.keyID,
                    "biometryKind": "faceID", "deviceName": "x", "counter": 0,
                    "signature": try other.sign(.register, challenge: try #require(challenge["challenge"]), counter: 0),
                ],
                token: tokens.access
            )
            #expect(mismatched.code == "key_id_mismatch")
            let unknown = try await api.signInChallenge(TestKey())
            #expect(unknown.status == 404 && unknown.code == "device_not_found")
            #expect(try await api.call(.delete, "/v1/devices/00000000-0000-0000-0000-000000000000", token: tokens.access).code == "device_not_found")
        }
    }

    @Test("another account's device can't be revoked or listed")
    func otherAccountsDevice() async throws {
        try await TestServer.run { api in
            let (_, aliceDevice) = try await api.enrolled(TestKey(), username: "alice")
            let (bobTokens, _) = try await api.enrolled(TestKey(), username: "bob", installation: "phone-2")
            #expect(try await api.call(.delete, "/v1/devices/\(aliceDevice)", token: bobTokens.access).code == "device_not_found")
            let list = try await api.call(.get, "/v1/devices", token: bobTokens.access)
            #expect((list.json["devices"] as? [[String: Any]])?.count == 1)
        }
    }
}
