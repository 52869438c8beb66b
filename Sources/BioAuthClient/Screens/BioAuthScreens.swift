import BioAuthCore

/// What the SDK's screens show, decided from the session and the sensor: the lock screen, the
/// "Sign in with Face ID" button and the settings toggle. `BioAuthApple`'s SwiftUI views only draw these.
public struct BioAuthScreens: Hashable, Sendable {
    /// The language of every text.
    public let language: Language

    /// Texts in `language`.
    public init(language: Language) { self.language = language }

    /// The "Sign in with Face ID / Touch ID" button on the sign-in screen.
    public struct SignInButton: Hashable, Sendable {
        /// "Sign in with Face ID", "使用面容 ID 登录".
        public let title: String
        /// The sensor the device was bound with.
        public let biometry: BiometryKind
    }

    /// The lock screen shown while the session is ``SessionState/locked``.
    public struct LockScreen: Hashable, Sendable {
        /// "Locked".
        public let title: String
        /// "Unlock with Face ID to continue."
        public let message: String
        /// "Unlock with Face ID".
        public let unlockButton: String
        /// "Sign in with password": ends the session.
        public let passwordButton: String
        /// The sensor.
        public let biometry: BiometryKind
    }

    /// The settings row that turns biometric sign-in on or off.
    public struct BiometricToggle: Hashable, Sendable {
        /// "Sign in with Face ID".
        public let label: String
        /// Whether biometric sign-in is on.
        public let isOn: Bool
        /// Whether the user may flip it now: turning off always; turning on only when signed in and the sensor
        /// is available.
        public let isEnabled: Bool
        /// Why it is off or can't be turned on, when there is a reason to tell.
        public let footnote: String?
    }

    /// The button, or `nil` when it must not be shown: only a signed-out app on a bound device shows it.
    public func signInButton(for snapshot: SessionSnapshot) -> SignInButton? {
        guard snapshot.state == .signedOut, let binding = snapshot.biometricSignIn.binding else { return nil }
        return SignInButton(title: text("screen.signIn.button", binding.biometry), biometry: binding.biometry)
    }

    /// The lock screen, or `nil` when the app is not locked.
    public func lockScreen(for snapshot: SessionSnapshot) -> LockScreen? {
        guard snapshot.state == .locked else { return nil }
        let kind = snapshot.biometricSignIn.binding?.biometry ?? .none
        return LockScreen(
            title: text("screen.lock.title", kind),
            message: text("screen.lock.message", kind),
            unlockButton: text("screen.lock.unlock", kind),
            passwordButton: text("screen.lock.password", kind),
            biometry: kind
        )
    }

    /// The settings toggle for the session and what the sensor can do now.
    public func biometricToggle(for snapshot: SessionSnapshot, availability: BiometricAvailability) -> BiometricToggle {
        let binding = snapshot.biometricSignIn.binding
        let kind = binding?.biometry ?? availability.kind
        let signedIn = snapshot.state == .unlocked
        var footnote: String?
        if case .turnedOff(let reason) = snapshot.biometricSignIn {
            footnote = reason.message(in: language, biometry: kind)
        }
        if binding == nil, case .unavailable(let error) = availability {
            footnote = error.message(in: language, biometry: kind)
        }
        return BiometricToggle(
            label: text("screen.settings.toggle", kind),
            isOn: binding != nil,
            isEnabled: binding != nil || (signedIn && availability.isAvailable),
            footnote: footnote
        )
    }

    /// What to tell the user after `error`, or `nil` when nothing should be shown: the user or the system
    /// cancelled the prompt (-2, -4, -9), which they already know.
    public func message(for error: any Error, biometry: BiometryKind) -> String? {
        switch error {
        case let error as BiometricError:
            let silent: [BiometricError.Code] = [.userCancel, .systemCancel, .appCancel]
            return silent.contains(error.code) ? nil : error.message(in: language, biometry: biometry)
        case let problem as APIProblem:
            return problem.message(in: language)
        default:
            return Localizer.string("problem.other", language: language)
        }
    }

    /// What to offer the user after `error`: the recovery of a biometric error or a server problem (another PIN, sign
    /// in again, contact the bank, wait), ``RecoveryAction/retry`` for anything else.
    public func recovery(for error: any Error) -> RecoveryAction {
        switch error {
        case let error as BiometricError: error.recovery
        case let problem as APIProblem: problem.recovery
        default: .retry
        }
    }

    private func text(_ key: String, _ kind: BiometryKind) -> String {
        Localizer.string(key, language: language, arguments: [BiometryName.name(of: kind, in: language)])
    }
}
