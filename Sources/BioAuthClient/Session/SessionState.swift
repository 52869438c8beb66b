/// Where the app's sign-in stands, replacing the `loginState`, `startAutoLoginState` and
/// `isAppCurrentLoginState` flags such apps keep.
public enum SessionState: String, Hashable, Sendable {
    /// No usable session on this launch: show the password sign-in, and "Sign in with Face ID" when
    /// ``SessionSnapshot/canSignInWithBiometrics``.
    case signedOut
    /// Signed in with the password just now; ask "Sign in with Face ID?" (启用 / 稍后).
    case offeringBiometricSignIn
    /// Signed in and in use.
    case unlocked
    /// Signed in, but the app is locked until a biometric unlocks it (after a relaunch or a long absence).
    case locked
}

/// Everything the UI needs to know about the session.
public struct SessionSnapshot: Hashable, Sendable {
    /// The explicit state.
    public let state: SessionState
    /// The account signed in, or last signed in.
    public let accountID: String?
    /// Whether biometric sign-in is on, and if not, why.
    public let biometricSignIn: BiometricSignInStatus
    /// The three flags such apps used to keep, for migration and for the transition-table test.
    public let legacyFlags: LegacyLoginFlags

    /// Whether "Sign in with Face ID" may be shown: the device is bound.
    public var canSignInWithBiometrics: Bool { biometricSignIn.binding != nil }
}

/// The values the three legacy flags would have. `nil` means never set.
public struct LegacyLoginFlags: Hashable, Sendable, CustomStringConvertible {
    /// Persisted: a session is alive.
    public let loginState: Bool?
    /// Persisted: biometric sign-in is on.
    public let startAutoLoginState: Bool?
    /// In memory, reset at each launch: the user got past the sign-in or lock screen on this launch.
    public let isAppCurrentLoginState: Bool

    /// The flags with these values.
    public init(loginState: Bool?, startAutoLoginState: Bool?, isAppCurrentLoginState: Bool) {
        self.loginState = loginState
        self.startAutoLoginState = startAutoLoginState
        self.isAppCurrentLoginState = isAppCurrentLoginState
    }

    public var description: String {
        func show(_ flag: Bool?) -> String { flag.map { $0 ? "YES" : "NO" } ?? "nil" }
        return "\(show(loginState)) | \(show(startAutoLoginState)) | \(show(isAppCurrentLoginState))"
    }
}
