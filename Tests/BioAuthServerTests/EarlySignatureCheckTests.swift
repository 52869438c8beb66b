import BioAuthCore
import Crypto
import Foundation
import Testing

@testable import BioAuthServer

/// A signature may be checked before its unit of work, against a key and challenge the server remembers
/// (``SignatureInputs``). Nothing remembered may decide a sign-in or a payment: the unit of work compares with
/// what the database holds and verifies itself when they differ.
@Suite("Signatures checked before the unit of work")
struct EarlySignatureCheckTests {
    @Test("a sign-in's signature is checked before its unit of work with the key and challenge this server knows")
    func checkedEarly() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let issued = try await api.signInChallenge(key)
            let challengeID = try #require(issued["challengeId"])
            let challengeText = try #require(issued["challenge"])
            let challenge = try #require(Base64URL.decode(challengeText))
            let signature = try #require(Base64URL.decode(try key.sign(.login, challenge: challengeText, counter: 1)))
            let early = try #require(
                api.service.earlyCheck(signature, keyID: key.keyIDBytes, challengeID: challengeID, purpose: .login, counter: 1),
                "the server issued the challenge and read the key for it, so it can check before the unit of work"
            )
            #expect(early.valid)
            #expect(early.challenge == challenge)
            let forged = try #require(
                api.service.earlyCheck(Data(signature.reversed()), keyID: key.keyIDBytes, challengeID: challengeID, purpose: .login, counter: 1)
            )
            #expect(!forged.valid)

            let signedIn = try await api.biometricSignIn(key, counter: 1, challenge: issued)
            #expect(signedIn.status == 201, "\(signedIn.raw)")
            // Used challenges are forgotten; an unknown one is simply checked in the unit of work.
            #expect(api.service.signatureInputs.challenge(challengeID) == nil)
            #expect(api.service.earlyCheck(signature, keyID: key.keyIDBytes, challengeID: challengeID, purpose: .login, counter: 1) == nil)
        }
    }

    @Test("a remembered challenge that is not the stored one cannot make a forged sign-in pass")
    func rememberedChallengeIsNotTrusted() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let issued = try await api.signInChallenge(key)
            let challengeID = try #require(issued["challengeId"])
            // As if the memory had been overwritten: the server now "remembers" bytes the attacker chose, and the
            // signature is over those bytes, not over the challenge in the database.
            let chosen = Data(repeating: 0xA5, count: 32)
            api.service.signatureInputs.remember(challenge: chosen, id: challengeID)
            let forged = try await api.call(
                .post,
                "/v1/sessions/biometric",
                json: [
                    "challengeId": challengeID, "keyId": key.keyID, "counter": 1,
                    "signature": try key.sign(.login, challenge: Base64URL.encode(chosen), counter: 1),
                ]
            )
            #expect(forged.status == 401)
            #expect(forged.code == "invalid_signature")
            // The stored challenge was used up by the refused attempt, as for any wrong signature.
            let again = try await api.biometricSignIn(key, counter: 2, challenge: issued)
            #expect(again.code == "challenge_used")
        }
    }

    @Test("a remembered key that is not the registered one cannot make another key's signature pass")
    func rememberedKeyIsNotTrusted() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let attacker = TestKey()
            _ = try await api.enrolled(key)
            let issued = try await api.signInChallenge(key)
            // The attacker's key remembered under the victim's key id: the early check then passes for the attacker's
            // signature, but the unit of work reads the registered key and verifies with it.
            let attackerKey = DevicePublicKey(attacker.privateKey.publicKey)
            api.service.signatureInputs.remember(attackerKey, id: key.keyIDBytes)
            let challengeText = try #require(issued["challenge"])
            let challengeID = try #require(issued["challengeId"])
            // Signed by the attacker's key over a payload naming that key, which is what the corrupted entry makes
            // the early check expect.
            let signature = try attacker.sign(.login, challenge: challengeText, counter: 1)
            let signatureBytes = try #require(Base64URL.decode(signature))
            let early = try #require(
                api.service.earlyCheck(signatureBytes, keyID: key.keyIDBytes, challengeID: challengeID, purpose: .login, counter: 1)
            )
            #expect(early.valid, "the corrupted entry makes the early check pass")
            let forged = try await api.call(
                .post,
                "/v1/sessions/biometric",
                json: [
                    "challengeId": challengeID, "keyId": key.keyID, "counter": 1, "signature": signature,
                ]
            )
            #expect(forged.status == 401)
            #expect(forged.code == "invalid_signature")
        }
    }

    @Test("a payment signature checked early still has to be over the stored challenge and the server's own transaction")
    func paymentNotTrustedOnMemory() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let payment = try await api.createPayment(token: tokens.access)
            let paymentID = try #require(payment["paymentId"])
            let issued = try await api.call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": key.keyID], token: tokens.access)
            let chosen = Data(repeating: 0x5A, count: 32)
            let challengeID = try #require(issued["challengeId"])
            api.service.signatureInputs.remember(challenge: chosen, id: challengeID)
            let refused = try await api.authorizeWithBiometrics(
                payment,
                key: key,
                counter: 1,
                token: tokens.access,
                challenge: Reply(status: issued.status, json: issued.json.merging(["challenge": Base64URL.encode(chosen)]) { $1 }, raw: issued.raw)
            )
            #expect(refused.code == "invalid_signature")
        }
    }

    @Test("keys and challenges remembered are bounded")
    func bounded() throws {
        let inputs = SignatureInputs(capacity: 4)
        for index in 0..<10 {
            inputs.remember(challenge: Data([UInt8(index)]), id: "challenge-\(index)")
            inputs.remember(DevicePublicKey(P256.Signing.PrivateKey().publicKey))
        }
        #expect(inputs.counts.keys <= 4)
        #expect(inputs.counts.challenges <= 4)
        #expect(inputs.challenge("challenge-9") == Data([9]))
    }

    @Test("a stored key is parsed once and then reused; other bytes under a known key id are parsed, not looked up")
    func keyParsedOnce() throws {
        let inputs = SignatureInputs()
        let bytes = P256.Signing.PrivateKey().publicKey.x963Representation
        let first = try inputs.key(x963Representation: bytes)
        #expect(inputs.key(id: first.keyID) == first)
        #expect(try inputs.key(x963Representation: bytes) == first)
        var notOnCurve = bytes
        notOnCurve[64] ^= 1
        #expect(throws: DeviceKeyFormatError.self) { try inputs.key(x963Representation: notOnCurve) }
    }
}
