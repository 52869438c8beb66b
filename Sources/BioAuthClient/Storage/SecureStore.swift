import BioAuthCore
import Foundation

/// Small secret values kept on the device: the persisted session state, the device binding, tokens.
///
/// `BioAuthApple`'s `KeychainSecureStore` keeps them in the Keychain (`WhenPasscodeSetThisDeviceOnly`);
/// `BioAuthTesting` has an in-memory store and a file-backed one for the command-line simulator. Keys are
/// 1 to 128 characters of `A-Z a-z 0-9 . _ -`. Every method throws ``SecureStoreError``.
public protocol SecureStore: Sendable {
    /// The value under `key`, or `nil` when there is none.
    func data(forKey key: String) async throws -> Data?
    /// Stores `data` under `key`, replacing any previous value.
    func set(_ data: Data, forKey key: String) async throws
    /// Removes the value under `key`; removing a missing value is not an error.
    func removeValue(forKey key: String) async throws
    /// Whether a value exists under `key`. Never shows a prompt, even for protected items.
    func containsValue(forKey key: String) async throws -> Bool
}

extension SecureStore {
    /// Checks a key's form; stores call this before touching storage.
    public static func validate(key: String) throws { try SecureStoreKey.validate(key) }
}

/// The form of secure-store keys, in one place for stores and for those that build keys.
public enum SecureStoreKey {
    /// Throws ``SecureStoreError/Code-swift.struct/invalidKey`` unless `key` is 1 to 128 characters of
    /// `A-Z a-z 0-9 . _ -` (and not `.` or `..`).
    public static func validate(_ key: String) throws {
        guard (1...128).contains(key.utf8.count),
            key.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }), key != ".", key != ".."
        else { throw SecureStoreError(.invalidKey, reason: "a store key is 1-128 characters of A-Z a-z 0-9 . _ -") }
    }
}

/// A secure store failed.
public struct SecureStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable machine code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String {
            case invalidKey = "store_invalid_key"
            case ioFailure = "store_io_failure"
            case accessDenied = "store_access_denied"
            case corruptData = "store_corrupt_data"
            case passcodeNotSet = "store_passcode_not_set"
        }
        private let backing: Backing
        /// The key is not of the accepted form.
        public static let invalidKey = Code(backing: .invalidKey)
        /// Reading or writing the storage failed.
        public static let ioFailure = Code(backing: .ioFailure)
        /// The platform refused access (device locked, missing entitlement).
        public static let accessDenied = Code(backing: .accessDenied)
        /// A stored value could not be decoded.
        public static let corruptData = Code(backing: .corruptData)
        /// The device has no passcode, so the Keychain stores nothing that is only for a device with one (every
        /// item of `KeychainSecureStore.system`): the user must set a passcode in Settings.
        public static let passcodeNotSet = Code(backing: .passcodeNotSet)
        /// Every code.
        public static let all: [Code] = [.invalidKey, .ioFailure, .accessDenied, .corruptData, .passcodeNotSet]
        /// The stable string, e.g. `"store_io_failure"`.
        public var description: String { backing.rawValue }
    }

    /// The stable code.
    public let code: Code
    /// An English diagnostic without secrets.
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

    /// What to offer the user: set a passcode, try again, sign in again (the saved state is unreadable) or update
    /// the app (it asked for a key the store refuses).
    public var recovery: RecoveryAction {
        switch code {
        case .passcodeNotSet: .openSettingsToSetPasscode
        case .corruptData: .signInAgain
        case .invalidKey: .updateApp
        default: .retry
        }
    }

    /// The message to show, in `language` (`biometry` names the sensor where the text does).
    public func message(in language: Language, biometry: BiometryKind = .none) -> String {
        Localizer.string("refusal.\(code)", language: language, biometry: biometry, signedIn: false)
    }

    public var description: String { "SecureStoreError(\(code)): \(reason)" }
    public static func == (lhs: SecureStoreError, rhs: SecureStoreError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
