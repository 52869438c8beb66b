import BioAuthClient
import BioAuthCore
import BioAuthTesting
internal import CCryptoBoringSSL
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import BioAuthServer

/// The relying party's checks the shared vectors do not reach, each shown refusing its attack: a ceremony run in a
/// cross-origin frame, the wrong ceremony type, a credential for another relying party, backup flags that contradict
/// each other or change, and an algorithm the server did not offer.
@Suite("WebAuthn checks")
struct WebAuthnChecksTests {
    static let rpID = "bank.example"
    static let party = WebAuthnRelyingParty(rpID: rpID, origins: ["https://bank.example"])
    static let challenge = Data(repeating: 5, count: 32)

    /// A `none` registration from the simulated authenticator (nothing in it is signed, so a test may change any byte).
    static func registration(rpID: String = rpID, behaviour: SimulatedPasskeyProvider.Behaviour = .init()) async throws -> PasskeyRegistration {
        try await SimulatedPasskeyProvider(behaviour: behaviour).register(
            PasskeyRegistrationRequest(relyingPartyID: rpID, challenge: challenge, userID: Data(repeating: 1, count: 32), userName: "alice")
        )
    }

    static func code(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as WebAuthnError {
            return error.code
        } catch {
            return "\(error)"
        }
    }

    static func register(_ clientData: Data, _ object: Data, party: WebAuthnRelyingParty = party) async -> String? {
        await code { _ = try await party.verifyRegistration(clientDataJSON: clientData, attestationObject: object, challenge: challenge, at: Date()) }
    }

    static func clientData(_ json: String) -> Data { Data(json.utf8) }

    @Test("client data: a cross-origin frame, a foreign top origin, the sign-in type at registration, another challenge")
    func clientData() async throws {
        let made = try await Self.registration()
        let challenge = Base64URL.encode(Self.challenge)
        #expect(await Self.register(made.clientDataJSON, made.attestationObject) == nil, "the untouched registration verifies")
        #expect(
            await Self.register(
                Self.clientData(
                    #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"https://bank.example","crossOrigin":true}"#
                ),
                made.attestationObject
            )
                == "passkey_origin_mismatch"
        )
        #expect(
            await Self.register(
                Self.clientData(
                    #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"https://bank.example","topOrigin":"https://evil.example"}"#
                ),
                made.attestationObject
            ) == "passkey_origin_mismatch"
        )
        #expect(
            await Self.register(
                Self.clientData(
                    #"{"type":"webauthn.get","challenge":"\#(challenge)","origin":"https://bank.example"}"#
                ),
                made.attestationObject
            ) == "passkey_type_mismatch"
        )
        #expect(
            await Self.register(
                Self.clientData(
                    #"{"type":"webauthn.create","challenge":"\#(Base64URL.encode(Data(repeating: 6, count: 32)))","origin":"https://bank.example"}"#
                ),
                made.attestationObject
            ) == "passkey_challenge_mismatch"
        )
        #expect(await Self.register(Self.clientData(#"{"type":"webauthn.create"}"#), made.attestationObject) == "passkey_malformed")
    }

    @Test("client data is read strictly, as request bodies are: a member twice, a byte-order mark or a trailing comma is malformed")
    func strictClientData() async throws {
        let made = try await Self.registration()
        let challenge = Base64URL.encode(Self.challenge)
        let members = #""type":"webauthn.create","challenge":"\#(challenge)","origin":"https://bank.example""#
        #expect(
            await Self.register(Self.clientData("{" + members + "}"), made.attestationObject) != "passkey_malformed",
            "the same members, once each, parse"
        )
        let lenient = [
            // `origin` twice: a lenient parser takes the last, which is the configured one.
            #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"https://evil.example","origin":"https://bank.example"}"#,
            "\u{FEFF}{" + members + "}",
            "{" + members + ",}",
        ]
        for json in lenient {
            #expect(await Self.register(Self.clientData(json), made.attestationObject) == "passkey_malformed", "\(json)")
        }
    }

    @Test("authenticator data: another relying party's credential, backed up but not backup eligible, an algorithm not offered")
    func authenticatorData() async throws {
        // Made for evil.example, though the client data says the bank's origin: only the rp id hash gives it away.
        let foreign = try await Self.registration(rpID: "evil.example", behaviour: .init(origin: "https://bank.example"))
        #expect(await Self.register(foreign.clientDataJSON, foreign.attestationObject) == "passkey_rp_id_mismatch")

        // BS set without BE: flags of a `none` registration are signed by nobody, so change them in place.
        let made = try await Self.registration(behaviour: .init(synced: false))
        guard case .map(let pairs) = try CBORDecoder().decode(made.attestationObject) else {
            Issue.record("not a map")
            return
        }
        let contradictory = CBOREncoder.encode(
            .map(
                pairs.map { pair in
                    guard pair.key == .text("authData"), var authData = pair.value.bytesValue else { return pair }
                    authData[authData.startIndex + 32] |= 0x10
                    return CBOR.Pair(pair.key, .bytes(authData))
                }
            )
        )
        #expect(await Self.register(made.clientDataJSON, contradictory) == "passkey_backup_flags")

        let ed25519Only = WebAuthnRelyingParty(rpID: Self.rpID, origins: ["https://bank.example"], algorithms: [.edDSA])
        #expect(await Self.register(made.clientDataJSON, made.attestationObject, party: ed25519Only) == "passkey_unsupported_algorithm")
    }

    @Test("sign-in: backup eligibility that differs from the registered credential's is refused, whichever way it changed")
    func backupEligibilityChanges() async throws {
        for synced in [true, false] {
            let provider = SimulatedPasskeyProvider(behaviour: .init(synced: synced))
            let made = try await provider.register(
                PasskeyRegistrationRequest(
                    relyingPartyID: Self.rpID,
                    challenge: Self.challenge,
                    userID: Data(repeating: 1, count: 32),
                    userName: "alice"
                )
            )
            let registered = try await Self.party.verifyRegistration(
                clientDataJSON: made.clientDataJSON,
                attestationObject: made.attestationObject,
                challenge: Self.challenge,
                at: Date()
            )
            #expect(registered.backupEligible == synced)
            await provider.setBehaviour(.init(synced: !synced))
            let assertion = try await provider.assert(PasskeyAssertionRequest(relyingPartyID: Self.rpID, challenge: Self.challenge))
            let stored = StoredPasskeyCredential(publicKey: registered.publicKey, signCount: 0, backupEligible: registered.backupEligible)
            let refused = await Self.code {
                _ = try Self.party.verifyAuthentication(
                    clientDataJSON: assertion.clientDataJSON,
                    authenticatorData: assertion.authenticatorData,
                    signature: assertion.signature,
                    challenge: Self.challenge,
                    stored: stored
                )
            }
            #expect(refused == "passkey_backup_flags", "synced at registration: \(synced)")
        }
    }

    /// A COSE AKP key (kty 7) with algorithm `alg` and public key bytes `pub`.
    static func akpKey(alg: Int, pub: Data) -> Data {
        CBOREncoder.encode(
            .map([
                CBOR.Pair(.unsigned(1), .unsigned(7)), CBOR.Pair(.unsigned(3), .negative(UInt64(-1 - alg))), CBOR.Pair(.negative(0), .bytes(pub)),
            ])
        )
    }

    /// The public key bytes (`pub`) of the COSE key in a shared ML-DSA assertion vector, with the vector's signed message and signature.
    static func mlDSAVector(_ level: Int) throws -> (pub: Data, message: Data, signature: Data) {
        let vector = WebAuthnVectorTests.load("authentication", "pywebauthn-test-verify-ml-dsa-\(level)-response.json")
        let key = try CBORDecoder().decode(WebAuthnVectorTests.bytes((vector["inputs"] as! [String: Any])["credential_public_key_b64url"]))
        let response = (vector["credential"] as! [String: Any])["response"] as! [String: Any]
        let message =
            WebAuthnVectorTests.bytes(response["authenticatorData"]) + SHA256.hash(data: WebAuthnVectorTests.bytes(response["clientDataJSON"]))
        return (try #require(key[int: -1]?.bytesValue), message, WebAuthnVectorTests.bytes(response["signature"]))
    }

    @Test(
        "ML-DSA-44 (COSE −48) is offered and verifies; a changed message or signature, a key of another size, or a key relabelled between parameter sets is refused"
    )
    func mlDSA44() throws {
        #expect(COSEAlgorithm.credentialDefaults.contains(.mlDSA44))
        let (pub44, message, signature) = try Self.mlDSAVector(44)
        let key = try COSEKey(cbor: Self.akpKey(alg: -48, pub: pub44))
        #expect(key.algorithm == .mlDSA44)
        #expect(key.isValidSignature(signature, for: message), "the vector's own signature verifies")
        #expect(!key.isValidSignature(signature, for: message + [0]), "over another message")
        #expect(!key.isValidSignature(signature.dropLast(), for: message), "one byte short")
        #expect(!key.isValidSignature(signature + [0], for: message), "one byte long")
        #expect(!key.isValidSignature(Data(), for: message))
        var flipped = signature
        flipped[flipped.startIndex + 100] ^= 1
        #expect(!key.isValidSignature(flipped, for: message), "one bit changed")

        let pub65 = try Self.mlDSAVector(65).pub
        for (alg, pub) in [(-48, pub65), (-49, pub44), (-48, pub44.dropLast()), (-48, Data())] {
            let refused = #expect(throws: WebAuthnError.self) { try COSEKey(cbor: Self.akpKey(alg: alg, pub: pub)) }
            #expect(refused?.code == "passkey_invalid_public_key", "alg \(alg) with \(pub.count) bytes")
        }
        // The ML-DSA-65 signature does not pass as ML-DSA-44, whatever key it is offered to.
        let (_, message65, signature65) = try Self.mlDSAVector(65)
        #expect(!key.isValidSignature(signature65, for: message65))
    }
}

/// Packed attestation with an ML-DSA-44 attestation certificate: no shared vector has one, so the test makes the key
/// (with BoringSSL, as the server verifies with it), the certificate and the signature over the ML-DSA-87 vector's
/// authenticator data.
extension WebAuthnChecksTests {
    /// A fresh ML-DSA-44 key pair: the encoded public key, and a signer.
    struct MLDSA44Signer {
        let publicKey: Data
        private let seed: [UInt8]

        init() {
            var publicKey = [UInt8](repeating: 0, count: Int(MLDSA44_PUBLIC_KEY_BYTES))
            var seed = [UInt8](repeating: 0, count: Int(MLDSA_SEED_BYTES))
            var key = MLDSA44_private_key()
            precondition(CCryptoBoringSSL_MLDSA44_generate_key(&publicKey, &seed, &key) == 1)
            self.publicKey = Data(publicKey)
            self.seed = seed
        }

        func sign(_ message: Data) -> Data {
            var key = MLDSA44_private_key()
            precondition(CCryptoBoringSSL_MLDSA44_private_key_from_seed(&key, seed, seed.count) == 1)
            var signature = [UInt8](repeating: 0, count: Int(MLDSA44_SIGNATURE_BYTES))
            let signed = Array(message)
            precondition(CCryptoBoringSSL_MLDSA44_sign(&signature, &key, signed, signed.count, nil, 0) == 1)
            return Data(signature)
        }
    }

    /// A version 3 attestation certificate for `publicKey` under `oid`, with the subject §8.2.1 asks for (or `unit` as
    /// its OU) and CA false. Its own signature is not checked by the server (such chains cannot be), so it is filler.
    static func mlDSACertificate(publicKey: Data, oid: ASN1ObjectIdentifier, unit: String = "Authenticator Attestation") throws -> Data {
        let subject = try DistinguishedName {
            CountryName("US")
            OrganizationName("BioAuth tests")
            OrganizationalUnitName(unit)
            CommonName("ML-DSA-44 attestation")
        }
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { certificate in
            try certificate.appendConstructedNode(identifier: .sequence) { tbs in
                try tbs.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { try $0.serialize(2) }
                try tbs.serialize(1)
                try tbs.appendConstructedNode(identifier: .sequence) { try $0.serialize(oid) }
                try tbs.serialize(subject)
                try tbs.appendConstructedNode(identifier: .sequence) { validity in
                    try validity.serialize(try UTCTime(year: 2025, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0))
                    try validity.serialize(try UTCTime(year: 2045, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0))
                }
                try tbs.serialize(subject)
                try tbs.appendConstructedNode(identifier: .sequence) { spki in
                    try spki.appendConstructedNode(identifier: .sequence) { try $0.serialize(oid) }
                    try spki.serialize(ASN1BitString(bytes: ArraySlice(publicKey)))
                }
                try tbs.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific)) { wrapper in
                    try wrapper.appendConstructedNode(identifier: .sequence) { extensions in
                        try extensions.serialize(try Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true))
                    }
                }
            }
            try certificate.appendConstructedNode(identifier: .sequence) { try $0.serialize(oid) }
            try certificate.serialize(ASN1BitString(bytes: [0, 1, 2, 3]))
        }
        return Data(serializer.serializedBytes)
    }

    @Test(
        "packed attestation with an ML-DSA-44 certificate verifies; another key's signature, another message, a mislabelled alg or a wrong subject is refused"
    )
    func mlDSA44AttestationCertificate() throws {
        let vector = WebAuthnVectorTests.load("attestation_statement_fido2", "fido2-test-mldsa87-attestation-valid.json")
        let authData = Data(hex: vector["auth_data_hex"] as! String)
        let clientDataHash = Data(hex: vector["client_data_hash_hex"] as! String)
        let mlDSA44: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 3, 17]
        let signer = MLDSA44Signer()
        let certificate = try Self.mlDSACertificate(publicKey: signer.publicKey, oid: mlDSA44)
        func verify(alg: Int = -48, signature: Data, certificate: Data = certificate) throws(WebAuthnError) -> VerifiedAttestation {
            let statement = CBOR.map([
                CBOR.Pair(.text("alg"), .negative(UInt64(-1 - alg))), CBOR.Pair(.text("sig"), .bytes(signature)),
                CBOR.Pair(.text("x5c"), .array([.bytes(certificate)])),
            ])
            return try AttestationStatementVerifier.verify(
                format: "packed",
                statement: statement,
                authData: authData,
                clientDataHash: clientDataHash,
                at: Date()
            )
        }
        let signature = signer.sign(authData + clientDataHash)
        let verified = try verify(signature: signature)
        #expect(verified.format == "packed" && verified.type == .basic)

        func refusal(_ body: () throws -> VerifiedAttestation) -> String? {
            do {
                _ = try body()
                return nil
            } catch { return (error as? WebAuthnError)?.code ?? "\(error)" }
        }
        #expect(refusal { try verify(signature: MLDSA44Signer().sign(authData + clientDataHash)) } == "passkey_attestation_invalid", "another key")
        #expect(refusal { try verify(signature: signer.sign(authData + clientDataHash + [0])) } == "passkey_attestation_invalid", "another message")
        #expect(refusal { try verify(alg: -49, signature: signature) } == "passkey_attestation_invalid", "alg says ML-DSA-65")
        let wrongUnit = try Self.mlDSACertificate(publicKey: signer.publicKey, oid: mlDSA44, unit: "Marketing")
        #expect(refusal { try verify(signature: signer.sign(authData + clientDataHash), certificate: wrongUnit) } == "passkey_attestation_invalid")
    }
}
