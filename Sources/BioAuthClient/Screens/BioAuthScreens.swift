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

    /// The sheet that asks the customer to approve a request that started elsewhere (the call centre, a web page's QR
    /// code): who asks and what, where it comes from, for a sign-in the three numbers to pick the other screen's from,
    /// and the buttons.
    public struct ApprovalSheet: Hashable, Sendable {
        /// "Sign in on Chrome on macOS? Asked by Web Banking", or "Approve: … — asked by Bank Call Centre": what the
        /// biometric prompt says too.
        public let title: String
        /// "Requested from 203.0.113.7", when the address is known.
        public let origin: String?
        /// For a sign-in: "Pick the number shown on the other screen." Nil for an operation.
        public let numberPrompt: String?
        /// For a sign-in: the numbers to offer, one button each; tapping one approves with it. Empty for an operation.
        public let numberChoices: [Int]
        /// For an operation: "Approve with Face ID". Nil for a sign-in (its numbers approve).
        public let approveButton: String?
        /// "It wasn't me": denies the request.
        public let denyButton: String
    }

    /// The sheet for `approval`, the device bound with `biometry`.
    public func approvalSheet(for approval: ApprovalDetails, biometry: BiometryKind) -> ApprovalSheet {
        let copy = PromptCopy(language: language)
        let address = approval.channel.address
        let signIn = approval.kind.matchesNumber
        return ApprovalSheet(
            title: copy.approvalReason(approval.summary),
            origin: address.isEmpty ? nil : Localizer.string("screen.approval.origin", language: language, arguments: [copy.payeeName(address)]),
            numberPrompt: signIn ? Localizer.string("screen.approval.pickNumber", language: language) : nil,
            numberChoices: signIn ? approval.numberChoices : [],
            approveButton: signIn ? nil : text("screen.approval.approve", biometry),
            denyButton: Localizer.string("screen.approval.deny", language: language)
        )
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
            footnote = reason.message(in: language, biometry: kind, signedIn: signedIn)
        }
        if binding == nil, case .unavailable(let error) = availability {
            footnote = error.message(in: language, biometry: kind, signedIn: signedIn)
        }
        return BiometricToggle(
            label: text("screen.settings.toggle", kind),
            isOn: binding != nil,
            isEnabled: binding != nil || (signedIn && availability.isAvailable),
            footnote: footnote
        )
    }

    /// What to tell the user after `error`, or `nil` when nothing should be shown: the user or the system
    /// cancelled the prompt (-2, -4, -9) or the passkey sheet, or the task was cancelled, which they already know.
    ///
    /// Every refusal the SDK throws has its own text: ``BiometricError``, ``APIProblem``, ``SecureStoreError`` (the
    /// Keychain's status codes, a device without a passcode), ``SessionError``, ``AppAttestProviderError`` and
    /// ``PasskeyProviderError``. `signedIn` (the session is unlocked: the customer is paying, approving or in
    /// settings) picks the copy that fits there: the payment PIN or this app's settings, never "sign in with your
    /// password".
    public func message(for error: any Error, biometry: BiometryKind, signedIn: Bool = false) -> String? {
        switch error {
        case let error as BiometricError:
            let silent: [BiometricError.Code] = [.userCancel, .systemCancel, .appCancel]
            return silent.contains(error.code) ? nil : error.message(in: language, biometry: biometry, signedIn: signedIn)
        case let problem as APIProblem: return problem.message(in: language)
        case let error as SecureStoreError: return error.message(in: language, biometry: biometry)
        case let error as SessionError: return error.message(in: language, biometry: biometry)
        case let error as AppAttestProviderError: return error.message(in: language, biometry: biometry)
        case let error as PasskeyProviderError:
            return error.code == PasskeyProviderError.cancelledCode ? nil : error.message(in: language, biometry: biometry)
        case is CancellationError: return nil
        default: return Localizer.string("problem.other", language: language)
        }
    }

    /// What to offer the user after `error`: each SDK refusal's own recovery (another PIN, sign in again, set a
    /// passcode, contact the bank, wait), ``RecoveryAction/none`` after a cancellation, ``RecoveryAction/retry`` for
    /// anything else.
    public func recovery(for error: any Error) -> RecoveryAction {
        switch error {
        case let error as BiometricError: error.recovery
        case let problem as APIProblem: problem.recovery
        case let error as SecureStoreError: error.recovery
        case let error as SessionError: error.recovery
        case let error as AppAttestProviderError: error.recovery
        case let error as PasskeyProviderError: error.recovery
        case is CancellationError: .none
        default: .retry
        }
    }

    private func text(_ key: String, _ kind: BiometryKind) -> String {
        Localizer.string(key, language: language, arguments: [BiometryName.name(of: kind, in: language)])
    }
}
