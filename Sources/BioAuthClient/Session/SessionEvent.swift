/// Something that happened to the session. The ``SessionMachine`` accepts it or refuses it with
/// ``SessionError/Code-swift.struct/invalidTransition``.
public enum SessionEvent: Hashable, Sendable {
    /// The server accepted the password. `canOfferBiometricSignIn`: the device can evaluate biometrics now.
    case passwordSignInSucceeded(accountID: String, canOfferBiometricSignIn: Bool)
    /// The user chose 启用 and the key was created and registered.
    case biometricSignInEnabled(DeviceBinding)
    /// The user chose 稍后.
    case biometricSignInDeclined
    /// The user turned biometric sign-in off.
    case biometricSignInDisabled
    /// The locked app was unlocked: the device key signed after a biometric match.
    case biometricVerificationSucceeded
    /// The locked app could not be unlocked by biometrics (the user chose the password): sign in again.
    case biometricVerificationFailed
    /// "Sign in with Face ID" succeeded: the server verified the device key's signature.
    case biometricSignInSucceeded
    /// The app was away longer than the grace period.
    case appLocked
    /// The user signed out. The device binding is kept.
    case signedOut
    /// The server said the session is over (refresh failed). The device binding is kept.
    case sessionExpired
    /// The device key was invalidated by a change of enrolled fingers or faces.
    case enrollmentChanged
    /// The device key is missing from this device.
    case deviceKeyMissing
    /// The server says this device was revoked.
    case deviceRevoked
    /// The server requires the secure environment check (App Attest) and this device's key was registered without
    /// it (before the deployment required it): the key can't be used any more, but the session is not ended.
    case secureEnvironmentRequired
}

/// Work the caller of a transition must not forget. ``SessionMachine`` performs it itself.
public enum SessionEffect: Hashable, Sendable {
    /// Biometric sign-in turned off: delete the key under this tag.
    case deleteDeviceKey(tag: String)
}

/// The result of one accepted event.
public struct SessionTransition: Hashable, Sendable {
    /// The state before.
    public let from: SessionState
    /// The state after.
    public let to: SessionState
    /// What the machine did besides changing state.
    public let effects: [SessionEffect]
}
