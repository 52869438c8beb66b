#if canImport(LocalAuthentication)
import BioAuthClient
import BioAuthCore
import Foundation
@preconcurrency import LocalAuthentication

/// ``BiometricAuthenticator`` over `LAContext`. Every decision is in `LocalAuthenticationMapping` (tested on
/// Linux); this file only talks to LocalAuthentication.
///
/// - A fresh `LAContext` per evaluation, so one success never silently unlocks the next operation.
/// - `canEvaluatePolicy(_:error:)` is asked before `biometryType` is read.
/// - Cancelling the calling task calls `invalidate()` on the context, which ends the prompt with
///   `LAError.appCancel`.
/// - The returned ``AuthenticationContext`` carries the evaluated `LAContext`, so the Secure Enclave signs
///   without a second prompt, and its `evaluatedPolicyDomainState` (or `domainState.biometry.stateHash` on
///   iOS 18 / macOS 15) for enrollment-change detection.
///
/// Not run on a device: compiled on Linux against stand-ins for the SDK's declarations and run against a scripted
/// phone (docs/APPLE.md, "Proven on Linux").
public struct LocalAuthenticator: BiometricAuthenticator {
    /// An authenticator over the system's LocalAuthentication.
    public init() {}

    public func availability(for policy: AuthenticationPolicy) async -> BiometricAvailability {
        let context = LAContext()
        var error: NSError?
        let canEvaluate = context.canEvaluatePolicy(Self.laPolicy(policy), error: &error)
        // Read only after the check: before it, biometryType is not meaningful.
        return LocalAuthenticationMapping.availability(
            for: policy,
            canEvaluate: canEvaluate,
            errorCode: error?.code,
            biometryTypeRawValue: context.biometryType.rawValue
        )
    }

    public func evaluate(_ prompt: BiometricPrompt) async throws -> AuthenticationContext {
        try LocalAuthenticationMapping.validate(prompt)
        let context = LAContext()
        let titles = LocalAuthenticationMapping.contextTitles(for: prompt)
        if let fallback = titles.fallbackTitle { context.localizedFallbackTitle = fallback }
        if let cancel = titles.cancelTitle { context.localizedCancelTitle = cancel }
        // The reason shown by keychain and Secure Enclave operations that use this context.
        context.localizedReason = prompt.reason
        let policy = Self.laPolicy(prompt.policy)
        var availabilityError: NSError?
        guard context.canEvaluatePolicy(policy, error: &availabilityError) else {
            throw BiometricError(laErrorCode: availabilityError?.code ?? -6)
        }
        let holder = ContextHolder(context)
        do {
            _ = try await withTaskCancellationHandler {
                try await holder.context.evaluatePolicy(policy, localizedReason: prompt.reason)
            } onCancel: {
                holder.context.invalidate()
            }
        } catch {
            let nsError = error as NSError
            throw LocalAuthenticationMapping.evaluationError(
                domain: nsError.domain,
                code: nsError.code,
                taskCancelled: Task.isCancelled
            )
        }
        let kind =
            prompt.policy == .biometrics
            ? LocalAuthenticationMapping.biometryKind(laBiometryTypeRawValue: context.biometryType.rawValue) : .none
        return AuthenticationContext(
            policy: prompt.policy,
            biometryKind: kind,
            domainState: Self.domainState(of: context),
            evaluatedAt: Date(),
            backendHandle: holder
        )
    }

    public func currentDomainState() async -> Data? {
        let context = LAContext()
        var error: NSError?
        guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else { return nil }
        return Self.domainState(of: context)
    }

    /// The `LAContext` behind an ``AuthenticationContext`` made by this authenticator, for the Secure Enclave.
    public static func laContext(of context: AuthenticationContext) -> LAContext? {
        (context.backendHandle as? ContextHolder)?.context
    }

    static func laPolicy(_ policy: AuthenticationPolicy) -> LAPolicy {
        policy == .biometrics ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication
    }

    static func domainState(of context: LAContext) -> Data? {
        if #available(iOS 18.0, macOS 15.0, *) {
            return context.domainState.biometry.stateHash
        }
        return context.evaluatedPolicyDomainState
    }
}

/// Carries an `LAContext` across concurrency domains. `LAContext` is thread-safe for the calls made here
/// (`evaluatePolicy`, `invalidate`).
final class ContextHolder: @unchecked Sendable {
    let context: LAContext
    init(_ context: LAContext) { self.context = context }
}
#endif
