import X509

/// The secure environment check (安全环境校验) of one deployment: whether App Attest is checked, and what is
/// accepted.
public struct AppAttestPolicy: Sendable {
    /// What the server does with App Attest.
    public enum Mode: String, Sendable, CaseIterable {
        /// Attestations and assertions are ignored.
        case off
        /// They are verified and every failure (or absence) is audited, but nothing is refused: for rolling out.
        case report
        /// Device registration needs a valid attestation; biometric sign-in and biometric payment
        /// authorization need a valid assertion from the device's attested key.
        case require
    }

    /// Off by default.
    public var mode: Mode = .off
    /// Whether PIN payments are allowed under ``Mode/require``. A PIN authorization carries no App Attest assertion
    /// (the PIN needs no device key), so it would bypass the check: refused (`pin_payments_disabled`) unless a
    /// deployment decides its PIN fallback is worth that. Off and report modes always allow PIN payments.
    public var allowsPINPaymentsUnderRequire = false
    /// The app ids (`TEAMID.bundle.id`) accepted.
    public var allowedAppIDs: [String] = []
    /// The environments accepted: production only by default; add development for test builds.
    public var environments: Set<AppAttestEnvironment> = [.production]
    /// The roots credential certificates must chain to: Apple's App Attestation Root CA. A test deployment
    /// trusts its test CA instead (`BioAuthTesting`'s simulated provider signs with one).
    public var trustedRoots: [Certificate] = [AppleAppAttestRoot.certificate]

    /// Off.
    public init() {}

    /// The verifier this policy describes.
    var verifier: AppAttestVerifier {
        AppAttestVerifier(trustedRoots: trustedRoots, allowedAppIDs: allowedAppIDs, environments: environments)
    }
}
