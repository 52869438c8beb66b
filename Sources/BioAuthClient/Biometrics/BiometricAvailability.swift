import BioAuthCore

/// The answer to "can this device evaluate that policy now?".
public enum BiometricAvailability: Hashable, Sendable {
    /// The policy can be evaluated. The kind is read only after the check succeeded: before that,
    /// `LAContext.biometryType` is not meaningful.
    case available(BiometryKind)
    /// It can't, and this is why (not enrolled, no passcode, locked out, no sensor, ...).
    case unavailable(BiometricError)

    /// The sensor kind when available, otherwise `BiometryKind.none`.
    public var kind: BiometryKind {
        if case .available(let kind) = self { return kind }
        return .none
    }

    /// Whether the policy can be evaluated now.
    public var isAvailable: Bool {
        if case .available = self { return true }
        return false
    }
}
