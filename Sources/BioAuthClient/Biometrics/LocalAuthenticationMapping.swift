import BioAuthCore
import Foundation

/// The decisions `BioAuthApple`'s `LocalAuthenticator` makes about `LAContext` answers, kept here so they are
/// tested on Linux. The Apple file only reads values off `LAContext` and passes them in.
public enum LocalAuthenticationMapping {
    /// `LAErrorDomain`.
    public static let errorDomain = "com.apple.LocalAuthentication"

    /// The sensor for an `LABiometryType` raw value: none 0, Touch ID 1, Face ID 2, Optic ID 4. A value Apple adds
    /// later reads as `BiometryKind.none` (the SDK treats it as "a biometric we can't name").
    public static func biometryKind(laBiometryTypeRawValue raw: Int) -> BiometryKind {
        switch raw {
        case 1: .touchID
        case 2: .faceID
        case 4: .opticID
        default: .none
        }
    }

    /// The availability from `canEvaluatePolicy(_:error:)` and then `biometryType`, read in that order (the
    /// type is only meaningful after a successful check).
    ///
    /// - Parameters:
    ///   - policy: the policy that was checked.
    ///   - canEvaluate: what `canEvaluatePolicy` returned.
    ///   - errorCode: the `LAError` code it set, if any.
    ///   - biometryTypeRawValue: `biometryType.rawValue`, read after the check.
    public static func availability(
        for policy: AuthenticationPolicy,
        canEvaluate: Bool,
        errorCode: Int?,
        biometryTypeRawValue: Int
    ) -> BiometricAvailability {
        guard canEvaluate else {
            return .unavailable(BiometricError(laErrorCode: errorCode ?? -6))
        }
        let kind = biometryKind(laBiometryTypeRawValue: biometryTypeRawValue)
        if policy == .biometrics && !kind.isBiometric {
            return .unavailable(BiometricError(.biometryNotAvailable, reason: "the sensor reported no known biometry type"))
        }
        return .available(kind)
    }

    /// The error for a failed `evaluatePolicy`: `LAError` codes map one to one; a cancelled task is an app
    /// cancel (the adapter called `invalidate()`); any other domain is ``BiometricError/Code-swift.struct/unknown``.
    public static func evaluationError(domain: String, code: Int, taskCancelled: Bool) -> BiometricError {
        if taskCancelled { return BiometricError(laErrorCode: -9) }
        guard domain == errorDomain else {
            return BiometricError(.unknown, reason: "evaluation failed outside LocalAuthentication (\(domain) \(code))")
        }
        return BiometricError(laErrorCode: code)
    }

    /// The texts to set on `LAContext` before evaluating `prompt`: `nil` leaves the system's default title; an
    /// empty fallback title hides the fallback button.
    public static func contextTitles(for prompt: BiometricPrompt) -> (fallbackTitle: String?, cancelTitle: String?) {
        (prompt.fallbackTitle, prompt.cancelTitle.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Checks a prompt before it reaches `LAContext`, which throws an Objective-C exception (a crash, not an
    /// error) for an empty reason.
    public static func validate(_ prompt: BiometricPrompt) throws {
        guard !prompt.reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw BiometricError(.invalidPrompt, reason: "the prompt reason must not be empty")
        }
    }
}
