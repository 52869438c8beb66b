import BioAuthCore

/// The session state machine refused an event or could not read its stored state.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable machine code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String {
            case invalidTransition = "session_invalid_transition"
            case corruptState = "session_corrupt_state"
        }
        private let backing: Backing
        /// The event makes no sense in the current state (unlocking an app that is not locked, enabling
        /// biometric sign-in while signed out, ...). Nothing was changed.
        public static let invalidTransition = Code(backing: .invalidTransition)
        /// The stored state could not be decoded. ``SessionMachine/discardStoredState(in:storageKey:)``
        /// starts over signed out.
        public static let corruptState = Code(backing: .corruptState)
        /// Every code.
        public static let all: [Code] = [.invalidTransition, .corruptState]
        /// The stable string.
        public var description: String { backing.rawValue }
    }

    /// The stable code.
    public let code: Code
    /// An English diagnostic.
    public let reason: String
    /// Where the error was made.
    public let file: String
    /// Where the error was made.
    public let line: Int

    /// An error with `code`.
    public init(_ code: Code, reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// What to offer the user: sign in again when the stored state is unreadable, else try again.
    public var recovery: RecoveryAction { code == .corruptState ? .signInAgain : .retry }

    /// The message to show, in `language`.
    public func message(in language: Language, biometry: BiometryKind = .none) -> String {
        Localizer.string("refusal.\(code)", language: language, biometry: biometry, signedIn: false)
    }

    public var description: String { "SessionError(\(code)): \(reason)" }
    public static func == (lhs: SessionError, rhs: SessionError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
