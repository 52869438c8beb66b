import BioAuthCore

/// Why an App Attest attestation or assertion was refused. One code per verification step, so a report
/// says exactly which check failed.
public struct AppAttestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problem code the API answers with (one of the `app_attest_*` `ProblemCode`s).
    public let problem: ProblemCode
    /// A diagnostic without secrets.
    public let reason: String

    /// The stable code, e.g. `"app_attest_nonce_mismatch"`.
    public var code: String { problem.rawValue }
    public var description: String { "\(code): \(reason)" }

    init(_ problem: ProblemCode, _ reason: String) {
        self.problem = problem
        self.reason = reason
    }

    /// Not CBOR, or not the expected structure.
    static func malformed(_ reason: String) -> AppAttestError { .init(.appAttestMalformed, reason) }
    /// `fmt` is not `apple-appattest`.
    static let format = AppAttestError(.appAttestFormat, "fmt is not apple-appattest")
    /// A certificate of the chain is not valid at the verification time.
    static let certificateExpired = AppAttestError(.appAttestCertificateExpired, "a certificate is not valid at the verification time")
    /// The chain does not lead to a trusted root.
    static let untrustedChain = AppAttestError(.appAttestUntrustedChain, "the certificate chain does not verify to a trusted root")
    /// The nonce in the credential certificate differs from SHA-256(authData ‖ clientDataHash).
    static let nonceMismatch = AppAttestError(.appAttestNonceMismatch, "the certificate's nonce does not match authData and the client data hash")
    /// The key id is not SHA-256 of the credential certificate's public key.
    static let keyIDMismatch = AppAttestError(.appAttestKeyIDMismatch, "the key id is not SHA-256 of the certificate's public key")
    /// rpIdHash is not SHA-256 of an allowed app id.
    static let appIDMismatch = AppAttestError(.appAttestAppIDMismatch, "rpIdHash is not SHA-256 of the app id")
    /// The attestation counter is not 0.
    static let counterNotZero = AppAttestError(.appAttestCounterNotZero, "an attestation's counter must be 0")
    /// The aaguid is not the one of the expected environment.
    static let environmentMismatch = AppAttestError(.appAttestEnvironmentMismatch, "aaguid does not match the expected environment")
    /// The credential id is not the key id.
    static let credentialIDMismatch = AppAttestError(.appAttestCredentialIDMismatch, "the credential id is not the key id")
    /// The assertion's signature does not verify with the attested key.
    static let invalidSignature = AppAttestError(.appAttestInvalidSignature, "the assertion signature does not verify over the nonce")
    /// The assertion's counter is not greater than the stored one (a replay or a cloned key).
    static let counterReplayed = AppAttestError(.appAttestCounterReplayed, "the assertion counter is not greater than the stored counter")
    /// The App Attest key is bound to another device already.
    static let keyReused = AppAttestError(.appAttestKeyReused, "this App Attest key is bound to another device")
    /// The request needs an attestation or assertion and has none.
    static let missing = AppAttestError(.appAttestMissing, "this deployment requires App Attest and the request carries none")

    /// Every code, for the documentation table test.
    public static let allCodes: [String] = [
        ProblemCode.appAttestMalformed, .appAttestFormat, .appAttestCertificateExpired, .appAttestUntrustedChain,
        .appAttestNonceMismatch, .appAttestKeyIDMismatch, .appAttestAppIDMismatch, .appAttestCounterNotZero,
        .appAttestEnvironmentMismatch, .appAttestCredentialIDMismatch, .appAttestInvalidSignature,
        .appAttestCounterReplayed, .appAttestMissing, .appAttestKeyReused,
    ].map(\.rawValue)
}
