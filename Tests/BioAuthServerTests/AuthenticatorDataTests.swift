import BioAuthCore
import BioAuthTesting
import Crypto
import Foundation
import Testing

@testable import BioAuthServer

/// The authenticator data layout App Attest and passkeys share: each verifier refuses what does not fit it with its
/// own code, and nothing past the end of the bytes is read.
@Suite("Authenticator data")
struct AuthenticatorDataTests {
    static let rpIDHash = [UInt8](SHA256.hash(data: Data("bank.example".utf8)))

    /// rpIdHash, flags, counter, then (with AT) aaguid, a credential id of `idLength` bytes and `trailing` bytes.
    static func bytes(flags: UInt8, counter: UInt32 = 7, idLength: Int? = nil, declaredLength: Int? = nil, trailing: [UInt8] = []) -> [UInt8] {
        var bytes = rpIDHash + [flags] + withUnsafeBytes(of: counter.bigEndian, Array.init)
        if let idLength {
            let declared = declaredLength ?? idLength
            bytes += [UInt8](repeating: 0xAA, count: 16) + [UInt8(declared >> 8), UInt8(declared & 0xFF)] + [UInt8](repeating: 0xC1, count: idLength)
        }
        return bytes + trailing
    }

    struct Refused: Error, Equatable { let reason: String }

    @Test("the fixed layout is read: rp id hash, flags, counter, and with AT the aaguid and credential id, ending where they end")
    func reads() throws {
        let plain = try AuthenticatorData(
            Self.bytes(flags: 0x05, counter: 0x0102_0304, trailing: [9, 9]),
            attestedCredential: .whenFlagged,
            malformed: Refused.init
        )
        #expect(plain.rpIDHash == Data(Self.rpIDHash))
        #expect(plain.flags == 0x05)
        #expect(plain.counter == 0x0102_0304)
        #expect(plain.attestedCredential == nil)
        #expect(plain.end == 37)

        let attested = try AuthenticatorData(
            Self.bytes(flags: 0x45, idLength: 32, trailing: [0xA1]),
            attestedCredential: .whenFlagged,
            malformed: Refused.init
        )
        #expect(attested.attestedCredential?.aaguid == Data(repeating: 0xAA, count: 16))
        #expect(attested.attestedCredential?.credentialID == Data(repeating: 0xC1, count: 32))
        #expect(attested.end == 55 + 32)
    }

    @Test("App Attest's rules: an attestation must carry the credential data; an assertion is read as 37 bytes though Apple sets AT in it")
    func appAttestRules() async throws {
        // An attestation signed and certified as it is, its AT flag cleared: refused, while the same device's
        // untampered attestation is accepted.
        let ca = try SimulatedAppAttestProvider.TestCA()
        let verifier = AppAttestVerifier(trustedRoots: [ca.certificate], allowedAppIDs: ["ABCDE12345.bank.example"], environments: [.production])
        let device = SimulatedAppAttestProvider(ca: ca, appID: "ABCDE12345.bank.example")
        let clientDataHash = Data(SHA256.hash(data: Data("challenge".utf8)))
        let keyID = try await device.generateKey()
        let accepted = try await verifier.verifyAttestation(
            try await device.attestKey(keyID, clientDataHash: clientDataHash),
            keyID: keyID,
            clientDataHash: clientDataHash,
            at: Date()
        )
        #expect(accepted.keyID == keyID)
        await device.setTamper(.noAttestedCredentialFlag)
        let unflagged = try await device.attestKey(keyID, clientDataHash: clientDataHash)
        await #expect(throws: AppAttestError.malformed("authenticator data has no attested credential data")) {
            try await verifier.verifyAttestation(unflagged, keyID: keyID, clientDataHash: clientDataHash, at: Date())
        }

        let assertion = try AuthenticatorData(Self.bytes(flags: 0x45, counter: 9), attestedCredential: .ignored, malformed: Refused.init)
        #expect(assertion.attestedCredential == nil)
        #expect(assertion.counter == 9)
        #expect(throws: Refused(reason: "attested credential data is truncated")) {
            try AuthenticatorData(Self.bytes(flags: 0x45, counter: 9), attestedCredential: .whenFlagged, malformed: Refused.init)
        }
    }

    @Test("too short, AT without its data, a credential id past the end or longer than 1023 bytes: refused, never read past the end")
    func refusals() {
        func reason(_ bytes: [UInt8]) -> String? {
            do {
                _ = try AuthenticatorData(bytes, attestedCredential: .whenFlagged, malformed: Refused.init)
                return nil
            } catch { return error.reason }
        }
        #expect(reason([]) == "authenticator data is shorter than 37 bytes")
        #expect(reason(Array(Self.bytes(flags: 0x05).dropLast())) == "authenticator data is shorter than 37 bytes")
        #expect(reason(Self.bytes(flags: 0x45)) == "attested credential data is truncated")
        #expect(reason(Array(Self.bytes(flags: 0x45, idLength: 0).dropLast())) == "attested credential data is truncated")
        #expect(reason(Self.bytes(flags: 0x45, idLength: 31, declaredLength: 32)) == "the credential id runs past the authenticator data")
        #expect(reason(Self.bytes(flags: 0x45, idLength: 1024)) == "the credential id is longer than 1023 bytes")
        #expect(reason(Self.bytes(flags: 0x45, idLength: 1023)) == nil)
        #expect(reason(Self.bytes(flags: 0x45, idLength: 0xFFFF, declaredLength: 0xFFFF)) == "the credential id is longer than 1023 bytes")
    }

    @Test("each verifier reports a layout defect with its own code: passkey_malformed, app_attest_malformed")
    func codes() throws {
        #expect(throws: WebAuthnError.malformed("attested credential data is truncated")) {
            try WebAuthnAuthenticatorData(Data(Self.bytes(flags: 0x45)))
        }

        // A correctly signed App Attest assertion whose authenticator data is one byte short.
        let key = P256.Signing.PrivateKey()
        let clientData = Data("payment".utf8)
        let authData = Data(Self.bytes(flags: 0x01).dropLast())
        let nonce = Data(SHA256.hash(data: authData + Data(SHA256.hash(data: clientData))))
        let signature = try key.signature(for: nonce).derRepresentation
        let assertion = CBOREncoder.encode(
            .map([
                CBOR.Pair(.text("signature"), .bytes(signature)), CBOR.Pair(.text("authenticatorData"), .bytes(authData)),
            ])
        )
        let verifier = AppAttestVerifier(allowedAppIDs: ["ABCDE12345.bank.example"], environments: [.production])
        #expect(throws: AppAttestError.malformed("authenticator data is shorter than 37 bytes")) {
            try verifier.verifyAssertion(
                assertion,
                clientData: clientData,
                key: DevicePublicKey(key.publicKey),
                appID: "ABCDE12345.bank.example",
                previousCounter: 0
            )
        }
    }
}
