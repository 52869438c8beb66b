import BioAuthCore
import Crypto
import Foundation
import Testing
import X509

@testable import BioAuthServer

/// The attestation trust policy with a packed x5c attestation made here: a vendor CA, an attestation certificate it
/// issued with the subject §8.2.1 requires, and the attestation key's signature over authData ‖ clientDataHash.
@Suite("Passkey attestation trust")
struct PasskeyAttestationTrustTests {
    static let rpID = "bank.example"
    static let origin = "https://bank.example"

    struct Vendor {
        let root: Certificate
        let rootKey: P256.Signing.PrivateKey
        let name: DistinguishedName

        init(_ commonName: String) throws {
            rootKey = P256.Signing.PrivateKey()
            name = try DistinguishedName { CommonName(commonName) }
            root = try Certificate(
                version: .v3,
                serialNumber: .init(),
                publicKey: .init(rootKey.publicKey),
                notValidBefore: Date(timeIntervalSince1970: 946_684_800),
                notValidAfter: Date(timeIntervalSince1970: 4_102_444_799),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true))
                },
                issuerPrivateKey: .init(rootKey)
            )
        }

        /// An attestation certificate for `key`, with `unit` as its OU (§8.2.1 wants "Authenticator Attestation").
        func attestationCertificate(for key: P256.Signing.PrivateKey, unit: String = "Authenticator Attestation") throws -> Certificate {
            try Certificate(
                version: .v3,
                serialNumber: .init(),
                publicKey: .init(key.publicKey),
                notValidBefore: Date(timeIntervalSince1970: 946_684_800),
                notValidAfter: Date(timeIntervalSince1970: 4_102_444_799),
                issuer: name,
                subject: try DistinguishedName {
                    CountryName("SE")
                    OrganizationName("Example Keys")
                    OrganizationalUnitName(unit)
                    CommonName("Example Key Attestation")
                },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
                issuerPrivateKey: .init(rootKey)
            )
        }
    }

    /// A registration (clientDataJSON, attestation object) for `challenge`, attested by `certificate`'s `key`.
    static func registration(challenge: Data, key: P256.Signing.PrivateKey, certificate: Certificate) throws -> (Data, Data) {
        let clientData = Data(#"{"type":"webauthn.create","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)"}"#.utf8)
        let credential = P256.Signing.PrivateKey().publicKey.x963Representation
        let cose = CBOREncoder.encode(
            .map([
                .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(1)),
                .init(.negative(1), .bytes(credential[1..<33])), .init(.negative(2), .bytes(credential[33..<65])),
            ])
        )
        var authData = Data(SHA256.hash(data: Data(rpID.utf8)))
        authData.append(0x45)  // UP, UV, AT
        authData.append(contentsOf: [0, 0, 0, 0])
        authData.append(Data(repeating: 7, count: 16))  // aaguid
        authData.append(contentsOf: [0, 16])
        authData.append(Data(repeating: 1, count: 16))  // credential id
        authData.append(cose)
        let signature = try key.signature(for: authData + Data(SHA256.hash(data: clientData))).derRepresentation
        let der = try certificate.serializeAsPEM().derBytes
        let object = CBOREncoder.encode(
            .map([
                .init(.text("fmt"), .text("packed")),
                .init(
                    .text("attStmt"),
                    .map([
                        .init(.text("alg"), .negative(6)), .init(.text("sig"), .bytes(signature)), .init(.text("x5c"), .array([.bytes(Data(der))])),
                    ])
                ),
                .init(.text("authData"), .bytes(authData)),
            ])
        )
        return (clientData, object)
    }

    @Test(
        "a chain to a listed root is trusted; another vendor's is refused under require and recorded as untrusted otherwise; a subject that breaks §8.2.1 is refused"
    )
    func trust() async throws {
        let vendor = try Vendor("Example Keys Root CA")
        let stranger = try Vendor("Someone Else's Root CA")
        let key = P256.Signing.PrivateKey()
        let challenge = Data(repeating: 3, count: 32)
        let (clientData, object) = try Self.registration(challenge: challenge, key: key, certificate: try vendor.attestationCertificate(for: key))
        func party(_ policy: PasskeyAttestationPolicy) -> WebAuthnRelyingParty {
            WebAuthnRelyingParty(rpID: Self.rpID, origins: [Self.origin], attestationPolicy: policy)
        }

        let trusted = try await party(.requireTrusted(["packed": [vendor.root]]))
            .verifyRegistration(clientDataJSON: clientData, attestationObject: object, challenge: challenge, at: Date())
        #expect(trusted.attestationTrusted && trusted.attestation.type == .basic && trusted.attestation.chain.count == 1)

        let refused = await #expect(throws: WebAuthnError.self) {
            try await party(.requireTrusted(["packed": [stranger.root]]))
                .verifyRegistration(clientDataJSON: clientData, attestationObject: object, challenge: challenge, at: Date())
        }
        #expect(refused?.problem == .passkeyAttestationUntrusted)
        let rootsOfAnotherFormat = await #expect(throws: WebAuthnError.self) {
            try await party(.requireTrusted(["tpm": [vendor.root]]))
                .verifyRegistration(clientDataJSON: clientData, attestationObject: object, challenge: challenge, at: Date())
        }
        #expect(rootsOfAnotherFormat?.problem == .passkeyAttestationUntrusted, "roots count for their own format only")

        let untrusted = try await party(.acceptAny).verifyRegistration(
            clientDataJSON: clientData,
            attestationObject: object,
            challenge: challenge,
            at: Date()
        )
        #expect(!untrusted.attestationTrusted && untrusted.attestation.format == "packed")

        // Past the certificates' validity the chain no longer verifies.
        let late = await #expect(throws: WebAuthnError.self) {
            try await party(.requireTrusted(["packed": [vendor.root]]))
                .verifyRegistration(
                    clientDataJSON: clientData,
                    attestationObject: object,
                    challenge: challenge,
                    at: Date(timeIntervalSince1970: 4_200_000_000)
                )
        }
        #expect(late?.problem == .passkeyAttestationUntrusted)

        let (badClientData, badObject) = try Self.registration(
            challenge: challenge,
            key: key,
            certificate: try vendor.attestationCertificate(for: key, unit: "Marketing")
        )
        let badSubject = await #expect(throws: WebAuthnError.self) {
            try await party(.acceptAny).verifyRegistration(
                clientDataJSON: badClientData,
                attestationObject: badObject,
                challenge: challenge,
                at: Date()
            )
        }
        #expect(badSubject?.problem == .passkeyAttestationInvalid)

        // A signature by another key than the certificate's.
        let (otherClientData, otherObject) = try Self.registration(
            challenge: challenge,
            key: P256.Signing.PrivateKey(),
            certificate: try vendor.attestationCertificate(for: key)
        )
        let forged = await #expect(throws: WebAuthnError.self) {
            try await party(.acceptAny).verifyRegistration(
                clientDataJSON: otherClientData,
                attestationObject: otherObject,
                challenge: challenge,
                at: Date()
            )
        }
        #expect(forged?.problem == .passkeyAttestationInvalid)
    }
}
