/// Why an App Attest attestation or assertion was refused. One code per verification step, so a report
/// says exactly which check failed.
public struct AppAttestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code.
    public let code: String
    /// A diagnostic without secrets.
    public let reason: String

    public var description: String { "\(code): \(reason)" }

    init(_ code: String, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Not CBOR, or not the expected structure.
    static func malformed(_ reason: String) -> AppAttestError { .init("app_attest_malformed", reason) }
    /// `fmt` is not `apple-appattest`.
    static let format = AppAttestError("app_attest_format", "fmt is not apple-appattest")
    /// A certificate of the chain is not valid at the verification time.
    static let certificateExpired = AppAttestError("app_attest_certificate_expired", "a certificate is not valid at the verification time")
    /// The chain does not lead to a trusted root.
    static let untrustedChain = AppAttestError("app_attest_untrusted_chain", "the certificate chain does not verify to a trusted root")
    /// The nonce in the credential certificate differs from SHA-256(authData ‖ clientDataHash).
    static let nonceMismatch = AppAttestError("app_attest_nonce_mismatch", "the certificate's nonce does not match authData and the client data hash")
    /// The key id is not SHA-256 of the credential certificate's public key.
    static let keyIDMismatch = AppAttestError("app_attest_key_id_mismatch", "the key id is not SHA-256 of the certificate's public key")
    /// rpIdHash is not SHA-256 of an allowed app id.
    static let appIDMismatch = AppAttestError("app_attest_app_id_mismatch", "rpIdHash is not SHA-256 of the app id")
    /// The attestation counter is not 0.
    static let counterNotZero = AppAttestError("app_attest_counter_not_zero", "an attestation's counter must be 0")
    /// The aaguid is not the one of the expected environment.
    static let environmentMismatch = AppAttestError("app_attest_environment_mismatch", "aaguid does not match the expected environment")
    /// The credential id is not the key id.
    static let credentialIDMismatch = AppAttestError("app_attest_credential_id_mismatch", "the credential id is not the key id")
    /// The assertion's signature does not verify with the attested key.
    static let invalidSignature = AppAttestError("app_attest_invalid_signature", "the assertion signature does not verify over the nonce")
    /// The assertion's counter is not greater than the stored one (a replay or a cloned key).
    static let counterReplayed = AppAttestError("app_attest_counter_replayed", "the assertion counter is not greater than the stored counter")
    /// The App Attest key is bound to another device already.
    static let keyReused = AppAttestError("app_attest_key_reused", "this App Attest key is bound to another device")
    /// The request needs an attestation or assertion and has none.
    static let missing = AppAttestError("app_attest_missing", "this deployment requires App Attest and the request carries none")

    /// Every code, for the documentation table test.
    public static let allCodes = [
        "app_attest_malformed", "app_attest_format", "app_attest_certificate_expired", "app_attest_untrusted_chain",
        "app_attest_nonce_mismatch", "app_attest_key_id_mismatch", "app_attest_app_id_mismatch", "app_attest_counter_not_zero",
        "app_attest_environment_mismatch", "app_attest_credential_id_mismatch", "app_attest_invalid_signature",
        "app_attest_counter_replayed", "app_attest_missing", "app_attest_key_reused",
    ]
}
