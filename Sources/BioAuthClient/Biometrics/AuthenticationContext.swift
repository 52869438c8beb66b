import BioAuthCore
import Foundation

/// Proof that one evaluation succeeded, to be handed to a ``DeviceKeyStore`` for one signature.
///
/// On Apple platforms it carries the evaluated `LAContext`, so the Secure Enclave signs without a second
/// prompt; the simulated authenticator issues single-use contexts that its software key store checks.
/// Holding a context is not proof on its own: only the key store's successful signature is.
public struct AuthenticationContext: Sendable {
    /// Identifies this evaluation.
    public let id: UUID
    /// The policy that was evaluated. Only ``AuthenticationPolicy/biometrics`` contexts unlock device keys.
    public let policy: AuthenticationPolicy
    /// The sensor that was used (`BiometryKind.none` when the passcode was used).
    public let biometryKind: BiometryKind
    /// The enrollment fingerprint at evaluation time (`evaluatedPolicyDomainState`), if the backend has one.
    public let domainState: Data?
    /// When the evaluation succeeded.
    public let evaluatedAt: Date
    /// The backend's own object (the `LAContext` on Apple platforms). Opaque to portable code.
    public let backendHandle: (any Sendable)?

    /// Made by authenticator backends after a successful evaluation.
    public init(
        id: UUID = UUID(),
        policy: AuthenticationPolicy,
        biometryKind: BiometryKind,
        domainState: Data?,
        evaluatedAt: Date,
        backendHandle: (any Sendable)? = nil
    ) {
        self.id = id
        self.policy = policy
        self.biometryKind = biometryKind
        self.domainState = domainState
        self.evaluatedAt = evaluatedAt
        self.backendHandle = backendHandle
    }
}
