import BioAuthCore
import Crypto
import Foundation
import SwiftASN1
import X509

/// Which App Attest environment a key was made in; its aaguid says.
public enum AppAttestEnvironment: String, Codable, Hashable, Sendable {
    /// Development builds: aaguid `appattestdevelop`.
    case development
    /// App Store, TestFlight and enterprise builds: aaguid `appattest` followed by seven zero bytes.
    case production

    /// The 16-byte aaguid of this environment.
    public var aaguid: Data {
        switch self {
        case .development: Data("appattestdevelop".utf8)
        case .production: Data("appattest".utf8) + Data(repeating: 0, count: 7)
        }
    }
}

/// A key that passed attestation: what the server stores for later assertions.
public struct AttestedAppKey: Hashable, Sendable {
    /// The key id (SHA-256 of the public key), as `DCAppAttestService` reports it.
    public let keyID: Data
    /// The key's public half (X9.63, 65 bytes).
    public let publicKey: DevicePublicKey
    /// The app id (`TEAMID.bundle.id`) it was attested for.
    public let appID: String
    /// The environment it was made in.
    public let environment: AppAttestEnvironment
    /// Apple's receipt, kept for fraud-risk queries.
    public let receipt: Data
}

/// Verifies App Attest attestations and assertions the way Apple's "Validating apps that connect to your
/// server" describes, one step per check, each with its own ``AppAttestError`` code.
///
/// Bytes after the top-level CBOR item are ignored, as other verifiers do (a real assertion in the test vectors
/// carries four): they are neither signed nor used.
public struct AppAttestVerifier: Sendable {
    /// The roots a credential certificate chain must lead to: Apple's App Attestation Root CA in production; a
    /// test deployment adds its own test CA.
    public let trustedRoots: [Certificate]
    /// The app ids (`TEAMID.bundle.id`) accepted.
    public let allowedAppIDs: [String]
    /// The environments accepted.
    public let environments: Set<AppAttestEnvironment>

    private static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]
    /// The largest attestation or assertion read, in bytes: 32 KiB (Apple's attestations are 5-6 KiB, assertions
    /// under 200 bytes).
    public static let maxObjectSize = 32 * 1024
    private static let decoder = CBORDecoder(maxInputSize: maxObjectSize, maxDepth: 8, maxItems: 256)

    /// A verifier trusting `trustedRoots` for `allowedAppIDs` in `environments`.
    public init(trustedRoots: [Certificate] = [AppleAppAttestRoot.certificate], allowedAppIDs: [String], environments: Set<AppAttestEnvironment>) {
        self.trustedRoots = trustedRoots
        self.allowedAppIDs = allowedAppIDs
        self.environments = environments
    }

    /// Verifies an attestation object for `keyID`, made over `clientDataHash`, at `time`.
    public func verifyAttestation(_ object: Data, keyID: Data, clientDataHash: Data, at time: Date) async throws(AppAttestError) -> AttestedAppKey {
        // 1. The attestation object is CBOR: {fmt, attStmt: {x5c, receipt}, authData}.
        let root: CBOR
        do { root = try Self.decoder.decodePrefix(object).0 } catch { throw .malformed("the attestation is not CBOR (\(error.code))") }
        guard root["fmt"]?.textValue == "apple-appattest" else {
            if root["fmt"] == nil { throw .malformed("no fmt") }
            throw .format
        }
        guard let statement = root["attStmt"], let chain = statement["x5c"]?.arrayValue, !chain.isEmpty, chain.count <= 4,
            let authData = root["authData"]?.bytesValue, let receipt = statement["receipt"]?.bytesValue
        else { throw .malformed("attStmt.x5c, attStmt.receipt and authData are required") }
        let certificates: [Certificate]
        do {
            certificates = try chain.map { item in
                guard let der = item.bytesValue else { throw AppAttestError.malformed("x5c holds a non-bytes item") }
                return try Certificate(derEncoded: [UInt8](der))
            }
        } catch {
            throw .malformed("x5c holds a certificate that does not parse")
        }
        let credentialCertificate = certificates[0]

        // 2. Every certificate is valid at `time`, and the chain leads to a trusted root.
        guard certificates.allSatisfy({ time >= $0.notValidBefore && time <= $0.notValidAfter }) else {
            throw .certificateExpired
        }
        guard await CertificateChain.verifies(leaf: credentialCertificate, intermediates: certificates.dropFirst(), roots: trustedRoots, at: time)
        else { throw .untrustedChain }

        // 3–4. nonce = SHA-256(authData ‖ clientDataHash) equals the credential certificate's extension
        // 1.2.840.113635.100.8.2, a DER SEQUENCE { [1] EXPLICIT OCTET STRING nonce }.
        let nonce = Data(SHA256.hash(data: authData + clientDataHash))
        guard let nonceExtension = credentialCertificate.extensions[oid: Self.nonceExtension],
            Data(nonceExtension.value) == Data([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20]) + nonce
        else { throw .nonceMismatch }

        // 5. The key id is SHA-256 of the credential certificate's public key (X9.63).
        guard let p256 = P256.Signing.PublicKey(credentialCertificate.publicKey) else { throw .keyIDMismatch }
        let publicKey = DevicePublicKey(p256)
        guard Data(SHA256.hash(data: p256.x963Representation)) == keyID else { throw .keyIDMismatch }

        // 6. rpIdHash is SHA-256 of an allowed app id.
        // Bytes after the credential id (the COSE key, extensions — present in some of Apple's own samples even
        // without the ED flag) are not needed and not interpreted.
        let parsed = try AuthenticatorData([UInt8](authData), attestedCredential: .whenFlagged, malformed: AppAttestError.malformed)
        guard let credential = parsed.attestedCredential else { throw .malformed("authenticator data has no attested credential data") }
        guard let appID = allowedAppIDs.first(where: { Data(SHA256.hash(data: Data($0.utf8))) == parsed.rpIDHash }) else {
            throw .appIDMismatch
        }
        // 7. The counter of a fresh key is 0.
        guard parsed.counter == 0 else { throw .counterNotZero }
        // 8. The aaguid says which environment made the key, and it is one we accept.
        guard let environment = [AppAttestEnvironment.development, .production].first(where: { $0.aaguid == credential.aaguid }),
            environments.contains(environment)
        else { throw .environmentMismatch }
        // 9. The credential id is the key id.
        guard credential.credentialID == keyID else { throw .credentialIDMismatch }
        return AttestedAppKey(keyID: keyID, publicKey: publicKey, appID: appID, environment: environment, receipt: receipt)
    }

    /// Verifies an assertion made with `key` over `clientData`; returns its counter, which the caller must store
    /// (atomically, only if it is still greater than what is stored).
    public func verifyAssertion(
        _ object: Data,
        clientData: Data,
        key publicKey: DevicePublicKey,
        appID: String,
        previousCounter: UInt32
    )
        throws(AppAttestError) -> UInt32
    {
        // 1. The assertion is CBOR: {signature, authenticatorData}.
        let root: CBOR
        do { root = try Self.decoder.decodePrefix(object).0 } catch { throw .malformed("the assertion is not CBOR (\(error.code))") }
        guard let signature = root["signature"]?.bytesValue, let authData = root["authenticatorData"]?.bytesValue else {
            throw .malformed("signature and authenticatorData are required")
        }
        // 2–3. nonce = SHA-256(authenticatorData ‖ SHA-256(clientData)); the signature (ECDSA P-256 / SHA-256) is over it.
        let nonce = Data(SHA256.hash(data: authData + Data(SHA256.hash(data: clientData))))
        guard publicKey.isValidSignature(signature, for: nonce) else { throw .invalidSignature }
        // 4. rpIdHash is SHA-256 of the app id the key was attested for.
        let parsed = try AuthenticatorData([UInt8](authData), attestedCredential: .ignored, malformed: AppAttestError.malformed)
        guard parsed.rpIDHash == Data(SHA256.hash(data: Data(appID.utf8))) else { throw .appIDMismatch }
        // 5. The counter only goes up.
        guard parsed.counter > previousCounter else { throw .counterReplayed }
        return parsed.counter
    }
}
