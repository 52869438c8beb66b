import BioAuthCore
import Crypto
import Foundation
import X509

/// Which attestation a deployment accepts for new passkeys.
public struct PasskeyAttestationPolicy: Sendable {
    /// Roots by attestation format (`"packed"`, `"tpm"`, `"apple"`, …). A chain that verifies to one of its
    /// format's roots makes the passkey's attestation trusted.
    public var trustedRoots: [String: [Certificate]]
    /// Whether a passkey needs trusted attestation. When `false` (the default), `none` and self attestation are
    /// accepted and other statements must still verify; when `true`, only a chain to a listed root is.
    public var requireTrustedAttestation: Bool

    /// Accepts any passkey whose attestation statement, if any, verifies: what consumer passkeys (iCloud Keychain,
    /// Google Password Manager) need, since they send `none`.
    public static let acceptAny = PasskeyAttestationPolicy(trustedRoots: [:], requireTrustedAttestation: false)

    /// Accepts only passkeys whose attestation leads to `roots` of their format.
    public static func requireTrusted(_ roots: [String: [Certificate]]) -> PasskeyAttestationPolicy {
        PasskeyAttestationPolicy(trustedRoots: roots, requireTrustedAttestation: true)
    }

    public init(trustedRoots: [String: [Certificate]], requireTrustedAttestation: Bool) {
        self.trustedRoots = trustedRoots
        self.requireTrustedAttestation = requireTrustedAttestation
    }
}

/// A credential that passed registration (WebAuthn §7.1): what the server stores.
public struct VerifiedRegistration: Sendable {
    /// The credential id.
    public let credentialID: Data
    /// The COSE_Key bytes as the authenticator wrote them.
    public let publicKey: Data
    /// The key's algorithm.
    public let algorithm: COSEAlgorithm
    /// The signature counter (0 for synced passkeys).
    public let signCount: UInt32
    /// The authenticator model's aaguid (all zero when withheld).
    public let aaguid: UUID
    /// BE: the credential may be synced to other devices (a multi-device passkey).
    public let backupEligible: Bool
    /// BS: the credential is synced now.
    public let backedUp: Bool
    /// UV: the user was verified.
    public let userVerified: Bool
    /// The attestation's format and type.
    public let attestation: VerifiedAttestation
    /// Whether the attestation chain leads to a root the policy lists.
    public let attestationTrusted: Bool
}

/// An assertion that passed sign-in (WebAuthn §7.2).
public struct VerifiedAssertion: Sendable {
    /// The counter to store.
    public let signCount: UInt32
    /// UV: the user was verified.
    public let userVerified: Bool
    /// BS: the credential is synced now.
    public let backedUp: Bool
}

/// The stored facts about a credential that sign-in checks against.
public struct StoredPasskeyCredential: Sendable {
    /// The COSE_Key bytes stored at registration.
    public var publicKey: Data
    /// The last counter stored.
    public var signCount: UInt32
    /// The backup eligibility recorded at registration; it never changes for a credential.
    public var backupEligible: Bool

    public init(publicKey: Data, signCount: UInt32, backupEligible: Bool) {
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
    }
}

/// A WebAuthn Level 3 relying party: verifies registrations (§7.1) and assertions (§7.2) for one rp id and
/// its origins. It holds no state; the caller issues and consumes challenges and stores credentials.
public struct WebAuthnRelyingParty: Sendable {
    /// The relying party id: a registrable domain suffix of the origins, e.g. `bank.example`.
    public var rpID: String
    /// The exact origins pages run on, e.g. `https://www.bank.example`.
    public var origins: [String]
    /// The algorithms a new credential may use.
    public var algorithms: [COSEAlgorithm]
    /// Which attestation is accepted.
    public var attestationPolicy: PasskeyAttestationPolicy
    /// Whether the UV flag is required. BioAuth's server always requires it; the vectors of other libraries do
    /// not all set it.
    public var requireUserVerification: Bool
    /// Whether the UP flag is required at registration (Level 3 lets a conditional create omit it).
    public var requireUserPresence: Bool

    public init(
        rpID: String,
        origins: [String],
        algorithms: [COSEAlgorithm] = COSEAlgorithm.credentialDefaults,
        attestationPolicy: PasskeyAttestationPolicy = .acceptAny,
        requireUserVerification: Bool = true,
        requireUserPresence: Bool = true
    ) {
        self.rpID = rpID
        self.origins = origins
        self.algorithms = algorithms
        self.attestationPolicy = attestationPolicy
        self.requireUserVerification = requireUserVerification
        self.requireUserPresence = requireUserPresence
    }

    /// The longest attestation object read, in bytes (ML-DSA-87 keys and TPM chains stay far below it).
    public static let maxAttestationObjectSize = 32 * 1024
    private var rpIDHash: Data { Data(SHA256.hash(data: Data(rpID.utf8))) }

    /// §7.1: verifies a registration whose `clientDataJSON` and `attestationObject` the browser returned for
    /// `challenge`, judged at `time`.
    public func verifyRegistration(
        clientDataJSON: Data,
        attestationObject: Data,
        challenge: Data,
        at time: Date
    ) async throws(WebAuthnError)
        -> VerifiedRegistration
    {
        // Steps 5–11: the client data.
        let clientData = try CollectedClientData(clientDataJSON)
        try clientData.verify(type: "webauthn.create", challenge: challenge, origins: origins)
        // Step 12.
        let clientDataHash = Data(SHA256.hash(data: clientDataJSON))
        // Step 13: the attestation object is CBOR {fmt: text, attStmt: map, authData: bytes}.
        let root: CBOR
        do {
            root = try CBORDecoder(maxInputSize: Self.maxAttestationObjectSize, maxDepth: 8, maxItems: 512).decode(attestationObject)
        } catch {
            throw .malformed("the attestation object is not CBOR (\(error.code))")
        }
        guard case .map = root, let format = root["fmt"]?.textValue, let statement = root["attStmt"], case .map = statement,
            let rawAuthData = root["authData"]?.bytesValue
        else { throw .malformed("the attestation object needs text fmt, map attStmt and bytes authData") }
        let authData = try WebAuthnAuthenticatorData(rawAuthData)
        guard let credential = authData.attested else { throw .malformed("the authenticator data carries no credential") }
        // Steps 14–17.
        try checkFlags(authData)
        // Step 20: an algorithm the server offered.
        guard algorithms.contains(credential.publicKey.algorithm) else {
            throw WebAuthnError(.passkeyUnsupportedAlgorithm, "algorithm \(credential.publicKey.algorithm.rawValue) was not offered")
        }
        // Steps 22–23: the statement of a known format verifies.
        let attestation = try AttestationStatementVerifier.verify(
            format: format,
            statement: statement,
            authData: authData,
            clientDataHash: clientDataHash,
            at: time
        )
        // Steps 24–25: the trust policy.
        let trusted = await isTrusted(attestation, at: time)
        if attestationPolicy.requireTrustedAttestation && !trusted {
            throw WebAuthnError(.passkeyAttestationUntrusted, "the \(format) attestation does not lead to a trusted root")
        }
        return VerifiedRegistration(
            credentialID: credential.credentialID,
            publicKey: credential.publicKeyCBOR,
            algorithm: credential.publicKey.algorithm,
            signCount: authData.signCount,
            aaguid: credential.aaguid.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) },
            backupEligible: authData.backupEligible,
            backedUp: authData.backedUp,
            userVerified: authData.userVerified,
            attestation: attestation,
            attestationTrusted: trusted
        )
    }

    /// §7.2: verifies an assertion for `stored` (the credential the caller looked up by its id and checked
    /// belongs to the user), made over `challenge`.
    public func verifyAuthentication(
        clientDataJSON: Data,
        authenticatorData: Data,
        signature: Data,
        challenge: Data,
        stored: StoredPasskeyCredential
    )
        throws(WebAuthnError) -> VerifiedAssertion
    {
        let key = try COSEKey(cbor: stored.publicKey)
        // Steps 10–14: the client data.
        let clientData = try CollectedClientData(clientDataJSON)
        try clientData.verify(type: "webauthn.get", challenge: challenge, origins: origins)
        // Steps 15–19: the authenticator data.
        let authData = try WebAuthnAuthenticatorData(authenticatorData)
        guard authData.attested == nil else { throw .malformed("an assertion carries no attested credential data") }
        try checkFlags(authData, presenceRequired: true)
        guard authData.backupEligible == stored.backupEligible else {
            throw WebAuthnError(.passkeyBackupFlags, "backup eligibility differs from the registered credential's")
        }
        // Steps 20–21: the signature over authenticatorData ‖ SHA-256(clientDataJSON).
        let signed = authenticatorData + Data(SHA256.hash(data: clientDataJSON))
        guard key.isValidSignature(signature, for: signed) else {
            throw WebAuthnError(.passkeyInvalidSignature, "the assertion signature does not verify")
        }
        // Step 22: a counter in use must grow; synced passkeys keep 0.
        if authData.signCount != 0 || stored.signCount != 0 {
            guard authData.signCount > stored.signCount else {
                throw WebAuthnError(.passkeyCounterReplayed, "counter \(authData.signCount) is not greater than \(stored.signCount)")
            }
        }
        return VerifiedAssertion(signCount: authData.signCount, userVerified: authData.userVerified, backedUp: authData.backedUp)
    }

    /// The rp id hash, UP, UV and the BE/BS rule (§7.1 steps 14–17, §7.2 steps 15–18).
    private func checkFlags(_ authData: WebAuthnAuthenticatorData, presenceRequired: Bool? = nil) throws(WebAuthnError) {
        guard authData.rpIDHash == rpIDHash else { throw WebAuthnError(.passkeyRPIDMismatch, "rpIdHash is not SHA-256 of \(rpID)") }
        if presenceRequired ?? requireUserPresence, !authData.userPresent {
            throw WebAuthnError(.passkeyUserNotPresent, "the UP flag is not set")
        }
        if requireUserVerification, !authData.userVerified { throw WebAuthnError(.passkeyUserNotVerified, "the UV flag is not set") }
        if !authData.backupEligible, authData.backedUp { throw WebAuthnError(.passkeyBackupFlags, "BS is set but BE is not") }
    }

    /// Whether the chain verifies, at `time`, to a root the policy lists for its format.
    private func isTrusted(_ attestation: VerifiedAttestation, at time: Date) async -> Bool {
        guard let leaf = attestation.chain.first, let roots = attestationPolicy.trustedRoots[attestation.format], !roots.isEmpty else { return false }
        return await CertificateChain.verifies(leaf: leaf, intermediates: attestation.chain.dropFirst(), roots: roots, at: time)
    }
}
