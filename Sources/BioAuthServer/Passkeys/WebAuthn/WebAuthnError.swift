import BioAuthCore

/// Why a WebAuthn registration or sign-in was refused: one stable code per kind of check (the `passkey_*`
/// `ProblemCode`s) and a diagnostic that names the step, without secrets.
public struct WebAuthnError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problem code the API answers with.
    public let problem: ProblemCode
    /// A diagnostic without secrets, for logs and tests.
    public let reason: String

    /// The stable code, e.g. `"passkey_origin_mismatch"`.
    public var code: String { problem.rawValue }
    public var description: String { "\(code): \(reason)" }

    init(_ problem: ProblemCode, _ reason: String) {
        self.problem = problem
        self.reason = reason
    }

    static func malformed(_ reason: String) -> WebAuthnError { .init(.passkeyMalformed, reason) }
    static func attestation(_ reason: String) -> WebAuthnError { .init(.passkeyAttestationInvalid, reason) }
    static func publicKey(_ reason: String) -> WebAuthnError { .init(.passkeyInvalidPublicKey, reason) }

    /// Every code, for the documentation table test.
    public static let allCodes: [String] = [
        ProblemCode.passkeyMalformed, .passkeyTypeMismatch, .passkeyChallengeMismatch, .passkeyOriginMismatch,
        .passkeyTokenBinding, .passkeyRPIDMismatch, .passkeyUserNotPresent, .passkeyUserNotVerified, .passkeyBackupFlags,
        .passkeyUnsupportedAlgorithm, .passkeyInvalidPublicKey, .passkeyAttestationFormat, .passkeyAttestationInvalid,
        .passkeyAttestationUntrusted, .passkeyInvalidSignature, .passkeyUserHandleMismatch, .passkeyCounterReplayed,
    ].map(\.rawValue)
}
