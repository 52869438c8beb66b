import BioAuthCore

/// Every way a biometric evaluation or a device-key operation can fail, with a stable code, the
/// LocalAuthentication error code it came from, a message in English and Simplified Chinese, and the
/// recovery action to offer.
///
/// Equality compares the code only.
public struct BiometricError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable machine code. A struct of static members, so new codes don't break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Backing: String, CaseIterable {
            case authenticationFailed = "authentication_failed"
            case userCancel = "user_cancel"
            case userFallback = "user_fallback"
            case systemCancel = "system_cancel"
            case passcodeNotSet = "passcode_not_set"
            case biometryNotAvailable = "biometry_not_available"
            case biometryNotEnrolled = "biometry_not_enrolled"
            case biometryLockout = "biometry_lockout"
            case appCancel = "app_cancel"
            case invalidContext = "invalid_context"
            case companionNotAvailable = "companion_not_available"
            case biometryNotPaired = "biometry_not_paired"
            case biometryDisconnected = "biometry_disconnected"
            case invalidDimensions = "invalid_dimensions"
            case notInteractive = "not_interactive"
            case unknown = "unknown"
            case invalidPrompt = "invalid_prompt"
            case keyInvalidated = "key_invalidated"
            case keyNotFound = "key_not_found"
            case keyAlreadyExists = "key_already_exists"
            case authenticationRequired = "authentication_required"
            case secureEnclaveUnavailable = "secure_enclave_unavailable"
            case keyOperationFailed = "key_operation_failed"
        }

        let backing: Backing

        /// -1: the biometric did not match (after the prompt's allowed attempts).
        public static let authenticationFailed = Code(backing: .authenticationFailed)
        /// -2: the user tapped Cancel.
        public static let userCancel = Code(backing: .userCancel)
        /// -3: the user tapped the fallback button ("Use Password").
        public static let userFallback = Code(backing: .userFallback)
        /// -4: the system ended the prompt (another app came forward, a call arrived).
        public static let systemCancel = Code(backing: .systemCancel)
        /// -5: the device has no passcode, so biometrics can't be used.
        public static let passcodeNotSet = Code(backing: .passcodeNotSet)
        /// -6: no sensor, or the user did not allow this app to use Face ID.
        public static let biometryNotAvailable = Code(backing: .biometryNotAvailable)
        /// -7: no finger or face is enrolled.
        public static let biometryNotEnrolled = Code(backing: .biometryNotEnrolled)
        /// -8: too many failed attempts; the passcode unlocks biometrics again.
        public static let biometryLockout = Code(backing: .biometryLockout)
        /// -9: the app ended the prompt (`invalidate()` or a cancelled task).
        public static let appCancel = Code(backing: .appCancel)
        /// -10: the context was invalidated before use.
        public static let invalidContext = Code(backing: .invalidContext)
        /// -11: no paired companion device (Apple Watch) is available.
        public static let companionNotAvailable = Code(backing: .companionNotAvailable)
        /// -12: the removable biometric accessory is not paired (Mac).
        public static let biometryNotPaired = Code(backing: .biometryNotPaired)
        /// -13: the removable biometric accessory is disconnected (Mac).
        public static let biometryDisconnected = Code(backing: .biometryDisconnected)
        /// -14: the prompt's dimensions were invalid.
        public static let invalidDimensions = Code(backing: .invalidDimensions)
        /// -1004: the app was not active (not interactive) when the prompt was requested.
        public static let notInteractive = Code(backing: .notInteractive)
        /// An error code LocalAuthentication added after this library was written.
        public static let unknown = Code(backing: .unknown)
        /// The prompt was not usable (an empty reason).
        public static let invalidPrompt = Code(backing: .invalidPrompt)
        /// The device key was invalidated because the biometric enrollment changed.
        public static let keyInvalidated = Code(backing: .keyInvalidated)
        /// There is no device key with that tag.
        public static let keyNotFound = Code(backing: .keyNotFound)
        /// A device key with that tag exists already.
        public static let keyAlreadyExists = Code(backing: .keyAlreadyExists)
        /// The context given to the key store is not a fresh, successful biometric evaluation.
        public static let authenticationRequired = Code(backing: .authenticationRequired)
        /// This device has no Secure Enclave (the iOS Simulator, older Macs).
        public static let secureEnclaveUnavailable = Code(backing: .secureEnclaveUnavailable)
        /// The key store failed for another reason (see the error's ``BiometricError/reason``).
        public static let keyOperationFailed = Code(backing: .keyOperationFailed)

        /// Every code, in declaration order.
        public static let all: [Code] = Backing.allCases.map { Code(backing: $0) }

        /// The stable string, e.g. `"biometry_lockout"`.
        public var description: String { backing.rawValue }
    }

    /// The stable code.
    public let code: Code
    /// The `LAError` raw code this came from, when it came from LocalAuthentication (also for unknown codes).
    public let laErrorCode: Int?
    /// An English diagnostic for logs. Never contains secrets; not for display (use ``message(in:biometry:signedIn:)``).
    public let reason: String
    /// Where the error was made.
    public let file: String
    /// Where the error was made.
    public let line: Int

    /// An error with the given code.
    public init(_ code: Code, reason: String? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.laErrorCode = code.laErrorCode
        self.reason = reason ?? code.description
        self.file = file
        self.line = line
    }

    /// Maps a LocalAuthentication error code (`LAError.Code.rawValue`) to its error. Unknown codes become
    /// ``Code-swift.struct/unknown`` and keep the raw code.
    public init(laErrorCode: Int, file: String = #fileID, line: Int = #line) {
        self.code = Code.fromLAErrorCode[laErrorCode] ?? .unknown
        self.laErrorCode = laErrorCode
        self.reason = "LocalAuthentication error \(laErrorCode) (\(code))"
        self.file = file
        self.line = line
    }

    /// What to offer the user.
    public var recovery: RecoveryAction { code.recovery }

    /// The message to show, in `language`, naming the sensor (`"Face ID"`, `"面容 ID"`). When `signedIn` (paying,
    /// approving, in the app's settings), a failure that would send a signed-out user to the password points to the
    /// payment PIN or this app's settings instead.
    public func message(in language: Language, biometry: BiometryKind, signedIn: Bool = false) -> String {
        Localizer.string("error.\(code)", language: language, biometry: biometry, signedIn: signedIn)
    }

    public var description: String { "BiometricError(\(code)): \(reason)" }

    public static func == (lhs: BiometricError, rhs: BiometricError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension BiometricError.Code {
    /// The `LAError` raw code, for codes that come from LocalAuthentication.
    public var laErrorCode: Int? {
        switch backing {
        case .authenticationFailed: -1
        case .userCancel: -2
        case .userFallback: -3
        case .systemCancel: -4
        case .passcodeNotSet: -5
        case .biometryNotAvailable: -6
        case .biometryNotEnrolled: -7
        case .biometryLockout: -8
        case .appCancel: -9
        case .invalidContext: -10
        case .companionNotAvailable: -11
        case .biometryNotPaired: -12
        case .biometryDisconnected: -13
        case .invalidDimensions: -14
        case .notInteractive: -1004
        case .unknown, .invalidPrompt, .keyInvalidated, .keyNotFound, .keyAlreadyExists,
            .authenticationRequired, .secureEnclaveUnavailable, .keyOperationFailed:
            nil
        }
    }

    /// What the app should offer after this failure.
    public var recovery: RecoveryAction {
        switch backing {
        case .authenticationFailed, .systemCancel, .invalidContext, .notInteractive: .retry
        case .biometryLockout: .enterPasscode
        case .biometryNotEnrolled: .openSettingsToEnroll
        case .passcodeNotSet: .openSettingsToSetPasscode
        case .userFallback, .biometryNotAvailable, .companionNotAvailable, .biometryNotPaired,
            .biometryDisconnected, .unknown, .keyInvalidated, .keyNotFound, .secureEnclaveUnavailable,
            .keyOperationFailed:
            .usePassword
        case .userCancel, .appCancel, .invalidDimensions, .invalidPrompt, .keyAlreadyExists,
            .authenticationRequired:
            .none
        }
    }

    static let fromLAErrorCode: [Int: BiometricError.Code] = Dictionary(
        uniqueKeysWithValues: all.compactMap { code in code.laErrorCode.map { ($0, code) } }
    )
}
