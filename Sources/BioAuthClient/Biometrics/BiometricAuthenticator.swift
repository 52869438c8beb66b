import Foundation

/// The device's biometric sensor and passcode, as LocalAuthentication exposes them.
///
/// `BioAuthApple`'s `LocalAuthenticator` wraps `LAContext`; `BioAuthTesting`'s `SimulatedAuthenticator`
/// behaves like a device and the iOS Simulator's Face ID / Touch ID menu. Everything that decides what to do
/// with the answers lives in portable code above this protocol.
public protocol BiometricAuthenticator: Sendable {
    /// Whether `policy` can be evaluated now, and with which sensor. Ask this first: the sensor kind is only
    /// meaningful after a successful check. Never shows a prompt.
    func availability(for policy: AuthenticationPolicy) async -> BiometricAvailability

    /// Shows the system prompt and waits for the user.
    ///
    /// Cancelling the calling task ends the prompt, as `LAContext.invalidate()` does, and the call throws
    /// ``BiometricError/Code-swift.struct/appCancel``.
    ///
    /// - Returns: a context that a ``DeviceKeyStore`` accepts for one signature.
    /// - Throws: ``BiometricError`` for every failure, mapped from the LocalAuthentication error code.
    func evaluate(_ prompt: BiometricPrompt) async throws -> AuthenticationContext

    /// The current biometric enrollment fingerprint (`evaluatedPolicyDomainState`), or `nil` when biometrics
    /// are unavailable. It changes whenever a finger or face is added or removed. Never shows a prompt.
    func currentDomainState() async -> Data?
}
