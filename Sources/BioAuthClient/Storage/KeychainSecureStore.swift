import Foundation

/// The four Keychain calls a ``KeychainSecureStore`` needs, for generic-password items of one service.
///
/// `BioAuthApple`'s `SystemKeychain` is the one place that calls `SecItemAdd`, `SecItemCopyMatching`,
/// `SecItemUpdate` and `SecItemDelete`; tests use an in-memory keychain that answers with the same result
/// codes. Every method returns the raw `OSStatus`.
public protocol KeychainBackend: Sendable {
    /// `SecItemCopyMatching` for the item's data.
    func copyData(account: String) async -> (status: Int32, data: Data?)
    /// `SecItemCopyMatching` for the item's attributes only, with an `LAContext` whose
    /// `interactionNotAllowed` is set: it never shows a prompt.
    func probe(account: String) async -> Int32
    /// `SecItemAdd` with the store's accessibility and access group.
    func add(account: String, data: Data) async -> Int32
    /// `SecItemUpdate` of the item's data.
    func update(account: String, data: Data) async -> Int32
    /// `SecItemDelete`.
    func delete(account: String) async -> Int32
    /// Whether the device has a passcode (`LAContext.canEvaluatePolicy(.deviceOwnerAuthentication)` does not answer
    /// `LAError.passcodeNotSet`). Asked only after an add failed: without a passcode the Keychain stores no item that is
    /// only for a device with one, whatever result code it gives. True unless a backend says otherwise.
    func isPasscodeSet() async -> Bool
}

extension KeychainBackend {
    /// True: a backend that can't tell assumes the device has a passcode.
    public func isPasscodeSet() async -> Bool { true }
}

/// Keychain result codes (`OSStatus`, from Security's `SecBase.h`) and what they mean to a store.
public enum KeychainStatus {
    /// `errSecSuccess`.
    public static let success: Int32 = 0
    /// `errSecItemNotFound`.
    public static let itemNotFound: Int32 = -25300
    /// `errSecDuplicateItem`.
    public static let duplicateItem: Int32 = -25299
    /// `errSecInteractionNotAllowed`: the item exists but reading it would need the user (or the device is locked).
    public static let interactionNotAllowed: Int32 = -25308
    /// `errSecAuthFailed`.
    public static let authFailed: Int32 = -25293
    /// `errSecUserCanceled`.
    public static let userCanceled: Int32 = -128
    /// `errSecMissingEntitlement`: usually a wrong access group or a missing keychain-sharing entitlement.
    public static let missingEntitlement: Int32 = -34018
    /// `errSecNotAvailable`: no keychain.
    public static let notAvailable: Int32 = -25291
    /// `errSecDecode`.
    public static let decode: Int32 = -26275

    /// The store error for a failed call, with the code in the reason (never the item's data).
    public static func error(_ status: Int32, during operation: String) -> SecureStoreError {
        switch status {
        case interactionNotAllowed, authFailed, userCanceled:
            SecureStoreError(.accessDenied, reason: "keychain \(operation): the item is protected or the device is locked (OSStatus \(status))")
        case missingEntitlement:
            SecureStoreError(.accessDenied, reason: "keychain \(operation): missing entitlement; check the access group (OSStatus \(status))")
        case decode:
            SecureStoreError(.corruptData, reason: "keychain \(operation): the item could not be decoded (OSStatus \(status))")
        default:
            SecureStoreError(.ioFailure, reason: "keychain \(operation) failed (OSStatus \(status))")
        }
    }
}

/// A ``SecureStore`` in the Keychain: each value is a generic-password item of one service, its account the
/// store key. On a device, make it with `KeychainSecureStore.system(service:accessGroup:)` from `BioAuthApple`
/// (items `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`: never backed up, never migrated, gone when the
/// passcode is removed).
///
/// `set` replaces in place (update, else add; a concurrent add is retried as an update), and
/// `containsValue` never shows a prompt: a protected item that would need one counts as present.
public struct KeychainSecureStore: SecureStore {
    private let backend: any KeychainBackend

    /// A store over `backend`.
    public init(backend: any KeychainBackend) { self.backend = backend }

    public func data(forKey key: String) async throws -> Data? {
        try Self.validate(key: key)
        let (status, data) = await backend.copyData(account: key)
        switch status {
        case KeychainStatus.success:
            guard let data else { throw SecureStoreError(.corruptData, reason: "keychain read returned no data") }
            return data
        case KeychainStatus.itemNotFound:
            return nil
        default:
            throw KeychainStatus.error(status, during: "read")
        }
    }

    public func set(_ data: Data, forKey key: String) async throws {
        try Self.validate(key: key)
        for _ in 0..<2 {
            let updated = await backend.update(account: key, data: data)
            if updated == KeychainStatus.success { return }
            guard updated == KeychainStatus.itemNotFound else { throw KeychainStatus.error(updated, during: "update") }
            let added = await backend.add(account: key, data: data)
            if added == KeychainStatus.success { return }
            guard added == KeychainStatus.duplicateItem else {
                guard await backend.isPasscodeSet() else {
                    throw SecureStoreError(.passcodeNotSet, reason: "keychain add: the device has no passcode (OSStatus \(added))")
                }
                throw KeychainStatus.error(added, during: "add")
            }
            // Added by someone else between our update and add: update it on the next pass.
        }
        throw SecureStoreError(.ioFailure, reason: "keychain write kept racing with another writer")
    }

    public func removeValue(forKey key: String) async throws {
        try Self.validate(key: key)
        let status = await backend.delete(account: key)
        guard status == KeychainStatus.success || status == KeychainStatus.itemNotFound else {
            throw KeychainStatus.error(status, during: "delete")
        }
    }

    public func containsValue(forKey key: String) async throws -> Bool {
        try Self.validate(key: key)
        let status = await backend.probe(account: key)
        switch status {
        case KeychainStatus.success, KeychainStatus.interactionNotAllowed: return true
        case KeychainStatus.itemNotFound: return false
        default: throw KeychainStatus.error(status, during: "lookup")
        }
    }
}
