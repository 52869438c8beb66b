/// The session's complete state: the persisted part and the part that lives only in memory.
///
/// The transition function is pure, so the whole table is tested without storage or time.
struct SessionModel: Hashable, Sendable {
    /// Stored in the ``SecureStore``; survives relaunches.
    struct Persisted: Codable, Hashable, Sendable {
        /// Format version of this record.
        var version = 1
        var accountID: String?
        /// `loginState`; `nil` until first set.
        var signedIn: Bool?
        var biometricSignIn: BiometricSignInStatus = .notOffered
        /// Keys whose deletion failed; retried on every later event.
        var keysToDelete: [String] = []
    }

    var persisted: Persisted
    /// `isAppCurrentLoginState`.
    var unlocked = false
    /// The offer (启用 / 稍后) is being shown.
    var offering = false

    /// The state at launch: memory reset, and a session without biometric sign-in is not resumed (the
    /// user signs in with the password again).
    static func launched(from persisted: Persisted) -> SessionModel {
        var model = SessionModel(persisted: persisted)
        if persisted.signedIn == true && persisted.biometricSignIn.binding == nil {
            model.persisted.signedIn = false
        }
        return model
    }

    var state: SessionState {
        guard persisted.signedIn == true else { return .signedOut }
        if offering { return .offeringBiometricSignIn }
        return unlocked ? .unlocked : .locked
    }

    var legacyFlags: LegacyLoginFlags {
        let startAutoLogin: Bool? =
            switch persisted.biometricSignIn {
            case .notOffered: nil
            case .enabled: true
            case .declined, .turnedOff: false
            }
        return LegacyLoginFlags(
            loginState: persisted.signedIn,
            startAutoLoginState: startAutoLogin,
            isAppCurrentLoginState: unlocked
        )
    }

    var snapshot: SessionSnapshot {
        SessionSnapshot(
            state: state,
            accountID: persisted.accountID,
            biometricSignIn: persisted.biometricSignIn,
            legacyFlags: legacyFlags
        )
    }

    /// Applies `event`, or refuses it when it makes no sense in the current state.
    func applying(_ event: SessionEvent) throws(SessionError) -> (SessionModel, [SessionEffect]) {
        var next = self
        var effects: [SessionEffect] = []
        let binding = persisted.biometricSignIn.binding

        func turnOff(_ reason: BiometricSignInOffReason) {
            guard let binding else { return }
            next.persisted.biometricSignIn = .turnedOff(reason: reason)
            effects.append(.deleteDeviceKey(tag: binding.keyTag))
        }
        func refuse() -> SessionError {
            SessionError(.invalidTransition, reason: "\(event) is not accepted in state \(state)")
        }

        switch event {
        case .passwordSignInSucceeded(let accountID, let canOffer):
            guard !accountID.isEmpty else { throw SessionError(.invalidTransition, reason: "empty account id") }
            if let binding, binding.accountID != accountID { turnOff(.accountChanged) }
            next.persisted.accountID = accountID
            next.persisted.signedIn = true
            next.unlocked = true
            next.offering = canOffer && next.persisted.biometricSignIn.binding == nil

        case .biometricSignInEnabled(let newBinding):
            guard state == .offeringBiometricSignIn || state == .unlocked, binding == nil,
                newBinding.accountID == persisted.accountID
            else { throw refuse() }
            next.persisted.biometricSignIn = .enabled(binding: newBinding)
            next.offering = false

        case .biometricSignInDeclined:
            guard state == .offeringBiometricSignIn else { throw refuse() }
            next.persisted.biometricSignIn = .declined
            next.offering = false

        case .biometricSignInDisabled:
            guard binding != nil else { throw refuse() }
            turnOff(.userDisabled)

        case .biometricVerificationSucceeded:
            guard state == .locked else { throw refuse() }
            next.unlocked = true

        case .biometricVerificationFailed:
            guard state == .locked else { throw refuse() }
            next.persisted.signedIn = false

        case .biometricSignInSucceeded:
            guard state == .signedOut, let binding else { throw refuse() }
            next.persisted.accountID = binding.accountID
            next.persisted.signedIn = true
            next.unlocked = true

        case .appLocked:
            // Nothing to unlock with unless biometric sign-in is on; a signed-out or locked app stays as it is.
            if binding != nil && (state == .unlocked || state == .offeringBiometricSignIn) {
                next.unlocked = false
                next.offering = false
            }

        case .signedOut, .sessionExpired:
            next.persisted.signedIn = persisted.signedIn == nil ? nil : false
            next.unlocked = false
            next.offering = false

        case .enrollmentChanged, .deviceKeyMissing:
            turnOff(event == .enrollmentChanged ? .enrollmentChanged : .keyMissing)
            // A locked app can no longer be unlocked by biometrics; an unlocked one stays in use.
            if state == .locked { next.persisted.signedIn = false }

        case .secureEnvironmentRequired:
            // Like an invalidated key: a locked app can no longer be unlocked by it; an unlocked one stays in use.
            turnOff(.secureEnvironmentRequired)
            if state == .locked { next.persisted.signedIn = false }

        case .deviceRevoked:
            turnOff(.deviceRevoked)
            // The server ended this device's sessions.
            if persisted.signedIn == true { next.persisted.signedIn = false }
            next.unlocked = false
            next.offering = false
        }
        if !next.persisted.signedIn.isTrue { next.unlocked = false }
        return (next, effects)
    }
}

extension Optional where Wrapped == Bool {
    fileprivate var isTrue: Bool { self == true }
}
