import Foundation

/// The phone the framework stubs behave as: its biometry, passcode, Secure Enclave, Keychain and App Attest service,
/// scripted by a test. Not an Apple API: the stubs import it privately, so `BioAuthApple` cannot see it; only the
/// tests do, to set the scene and to read what happened.
///
/// Each behaviour follows what Apple documents (the stub that uses it cites where); `reset()` gives a phone with Face ID
/// enrolled, a passcode, a Secure Enclave, App Attest, an active app and nothing stored.
public final class SimulatedDevice: @unchecked Sendable {
    /// The one phone of a test process. Tests that use it run serialized.
    public static let current = SimulatedDevice()

    /// The sensor, by `LABiometryType` raw value: 0 none, 1 Touch ID, 2 Face ID, 4 Optic ID.
    public enum Biometry: Int, Sendable {
        case none = 0
        case touchID = 1
        case faceID = 2
        case opticID = 4
    }
    /// What the user does at the next biometric prompt.
    public enum Attempt: Sendable, Equatable { case match, noMatch, cancel, fallback, passcode }

    private let lock = NSLock()
    private var state = State()

    struct State {
        var biometry = Biometry.faceID
        var enrolled = true
        var passcodeSet = true
        var secureEnclave = true
        var appActive = true
        var enrollment = Data("enrollment-1".utf8)
        var failedMatches = 0
        var lockedOut = false
        var attempts: [Attempt] = []
        var prompts: [Prompt] = []
        var keychain: [String: [String: Any]] = [:]
        var keychainFailures: [Int32] = []
        var appAttestSupported = true
        var appAttestServerUnavailable = false
        var appAttestKeys: Set<String> = []
        var evaluatedContexts: Set<ObjectIdentifier> = []
        var passkeyAnswers: [PasskeyAnswer] = []
        var passkeys: [Passkey] = []
        var passkeyRequests: [PasskeyRequest] = []
    }

    /// What the user (or the system) does at the next passkey sheet.
    public enum PasskeyAnswer: Sendable, Equatable {
        /// Face ID matches and the passkey is made or used.
        case approve
        /// An `ASAuthorizationError` code: 1001 canceled, 1003 not handled, 1004 failed (e.g. no associated domain), …
        case fail(Int)
    }

    /// A passkey iCloud Keychain holds.
    public struct Passkey: Sendable, Equatable {
        public var relyingPartyID: String
        public var credentialID: Data
        public var userID: Data
    }

    /// A passkey request the system received, as the app made it.
    public struct PasskeyRequest: Sendable, Equatable {
        public var kind: String  // "registration" or "assertion"
        public var relyingPartyID: String
        public var challenge: Data
        public var userVerification: String
        public var credentialIDs: [Data]  // allowed (assertion) or excluded (registration)
        public init(kind: String, relyingPartyID: String, challenge: Data, userVerification: String, credentialIDs: [Data]) {
            self.kind = kind
            self.relyingPartyID = relyingPartyID
            self.challenge = challenge
            self.userVerification = userVerification
            self.credentialIDs = credentialIDs
        }
    }

    /// A prompt the system showed.
    public struct Prompt: Sendable, Equatable {
        public var reason: String
        /// The fallback button's title: `nil` is the system's default, `""` hides the button.
        public var fallbackTitle: String?
        public var cancelTitle: String?
        public init(reason: String, fallbackTitle: String?, cancelTitle: String?) {
            self.reason = reason
            self.fallbackTitle = fallbackTitle
            self.cancelTitle = cancelTitle
        }
    }

    func withState<T>(_ body: (inout State) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// One field of the state, read or written under the lock.
    private subscript<Value>(_ field: WritableKeyPath<State, Value>) -> Value {
        get { withState { $0[keyPath: field] } }
        set { withState { $0[keyPath: field] = newValue } }
    }

    /// Back to the default phone.
    public func reset() { withState { $0 = State() } }

    public var biometry: Biometry {
        get { self[\.biometry] }
        set { self[\.biometry] = newValue }
    }
    public var enrolled: Bool {
        get { self[\.enrolled] }
        set { self[\.enrolled] = newValue }
    }
    public var passcodeSet: Bool {
        get { self[\.passcodeSet] }
        set { self[\.passcodeSet] = newValue }
    }
    public var hasSecureEnclave: Bool {
        get { self[\.secureEnclave] }
        set { self[\.secureEnclave] = newValue }
    }
    /// Whether the app is in the foreground and active; LocalAuthentication refuses to prompt otherwise (-1004).
    public var appActive: Bool {
        get { self[\.appActive] }
        set { self[\.appActive] = newValue }
    }
    /// Whether five failed matches in a row have locked biometrics until the passcode is entered.
    public var lockedOut: Bool { withState { $0.lockedOut } }
    public var appAttestSupported: Bool {
        get { self[\.appAttestSupported] }
        set { self[\.appAttestSupported] = newValue }
    }
    public var appAttestServerUnavailable: Bool {
        get { self[\.appAttestServerUnavailable] }
        set { self[\.appAttestServerUnavailable] = newValue }
    }
    /// Every prompt shown so far.
    public var prompts: [Prompt] { withState { $0.prompts } }

    /// The user adds or removes a face or finger: the enrollment state changes, and `.biometryCurrentSet` keys die.
    public func changeEnrollment() {
        withState { $0.enrollment = Data(UUID().uuidString.utf8) }
    }

    /// What the user does at the next prompts, in order; with none scripted the user matches.
    public func script(_ attempts: Attempt...) { withState { $0.attempts += attempts } }

    /// The next Keychain calls return these statuses instead of doing anything (errSecInteractionNotAllowed while
    /// the device is locked, errSecAuthFailed, ...).
    public func failKeychain(_ statuses: Int32...) { withState { $0.keychainFailures += statuses } }

    /// The stored Keychain item of `service` and `account`, as the Keychain holds it.
    public func keychainItem(service: String, account: String) -> [String: Any]? {
        withState { $0.keychain["\(service)\u{0}\(account)"] }
    }

    // MARK: used by the stubs

    /// The current enrollment's state hash, or `nil` when nothing is enrolled.
    public var enrollmentHash: Data? { withState { $0.enrolled && $0.biometry != .none ? $0.enrollment : nil } }

    /// `LAContext.canEvaluatePolicy`: the LAError code that stops `policy` (1 biometrics, 2 owner), or `nil`.
    public func preflight(policy: Int) -> Int? {
        withState { state in
            if policy == 1 {
                if state.biometry == .none { return -6 }  // biometryNotAvailable
                if !state.passcodeSet { return -5 }  // passcodeNotSet
                if !state.enrolled { return -7 }  // biometryNotEnrolled
                if state.lockedOut { return -8 }  // biometryLockout
                return nil
            }
            return state.passcodeSet ? nil : -5
        }
    }

    /// `LAContext.evaluatePolicy`: shows the prompt and plays the user's scripted attempt. Returns the LAError code of a
    /// failure, or `nil` on success.
    public func evaluate(policy: Int, prompt: Prompt, interactionNotAllowed: Bool) -> Int? {
        if let code = preflight(policy: policy), !(policy == 2 && code == -8) { return code }
        return withState { state in
            guard state.appActive else { return -1004 }  // notInteractive
            guard !interactionNotAllowed else { return -1004 }
            state.prompts.append(prompt)
            let attempt = state.attempts.isEmpty ? .match : state.attempts.removeFirst()
            switch attempt {
            case .match where policy == 1 && state.lockedOut: return -8
            case .match:
                state.failedMatches = 0
                return nil
            case .passcode:
                // The passcode re-enables biometry after a lockout; it is no answer to a biometrics-only prompt.
                guard policy == 2 else { return -2 }
                state.failedMatches = 0
                state.lockedOut = false
                return nil
            case .noMatch:
                state.failedMatches += 1
                if state.failedMatches >= 5 { state.lockedOut = true }
                return state.lockedOut ? -8 : -1  // biometryLockout, authenticationFailed
            case .cancel: return -2  // userCancel
            case .fallback: return prompt.fallbackTitle == "" ? -2 : -3  // no button to tap when it is hidden
            }
        }
    }

    /// The status of the next Keychain call when a failure is scripted.
    public func nextKeychainFailure() -> Int32? {
        withState { $0.keychainFailures.isEmpty ? nil : $0.keychainFailures.removeFirst() }
    }

    public func keychainCopy(_ key: String) -> [String: Any]? { withState { $0.keychain[key] } }
    public func keychainStore(_ key: String, _ item: [String: Any]?) { withState { $0.keychain[key] = item } }

    /// Records that `context` (an `LAContext`) passed an evaluation, so keys may use it without prompting again.
    public func markEvaluated(_ context: AnyObject) { withState { _ = $0.evaluatedContexts.insert(ObjectIdentifier(context)) } }
    public func isEvaluated(_ context: AnyObject) -> Bool { withState { $0.evaluatedContexts.contains(ObjectIdentifier(context)) } }

    /// What the user does at the next passkey sheets, in order; with none scripted the user approves.
    public func scriptPasskeys(_ answers: PasskeyAnswer...) { withState { $0.passkeyAnswers += answers } }
    /// Every passkey request the app made.
    public var passkeyRequests: [PasskeyRequest] { withState { $0.passkeyRequests } }
    /// The passkeys held.
    public var passkeys: [Passkey] { withState { $0.passkeys } }

    /// The system's passkey sheet: records the request, plays the scripted answer; on approval makes or finds the
    /// passkey. Returns the answer and the passkey used (`nil` when none fits).
    public func passkeySheet(_ request: PasskeyRequest, userID: Data?) -> (PasskeyAnswer, Passkey?) {
        withState { state in
            state.passkeyRequests.append(request)
            let answer = state.passkeyAnswers.isEmpty ? .approve : state.passkeyAnswers.removeFirst()
            guard answer == .approve else { return (answer, nil) }
            if let userID {
                if state.passkeys.contains(where: { request.credentialIDs.contains($0.credentialID) }) { return (.fail(1006), nil) }
                let passkey = Passkey(
                    relyingPartyID: request.relyingPartyID,
                    credentialID: Data((0..<16).map { _ in UInt8.random(in: 0...255) }),
                    userID: userID
                )
                state.passkeys.append(passkey)
                return (answer, passkey)
            }
            let found = state.passkeys.last {
                $0.relyingPartyID == request.relyingPartyID && (request.credentialIDs.isEmpty || request.credentialIDs.contains($0.credentialID))
            }
            return found.map { (answer, $0) } ?? (.fail(1001), nil)  // no passkey: the sheet offers nothing but Cancel
        }
    }

    public func appAttestGenerateKey() -> String {
        let id = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        withState { _ = $0.appAttestKeys.insert(id) }
        return id
    }
    public func appAttestHasKey(_ id: String) -> Bool { withState { $0.appAttestKeys.contains(id) } }
}
