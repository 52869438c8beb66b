#if canImport(Security) && canImport(LocalAuthentication)
import BioAuthClient
import Foundation
import LocalAuthentication
import Security

/// The one place in BioAuth that calls `SecItem*`: generic-password items of one service, accessible only
/// while the device has a passcode and only on this device (`kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`:
/// not in backups, not migrated to a new phone, deleted when the passcode is removed).
///
/// Not run on a device: compiled on Linux against stand-ins for the SDK's declarations and run against a scripted
/// phone (docs/APPLE.md, "Proven on Linux").
public struct SystemKeychain: KeychainBackend {
    /// `kSecAttrService` of every item.
    public let service: String
    /// `kSecAttrAccessGroup`, to share items with an app extension; `nil` for the app's default group.
    public let accessGroup: String?

    /// Items of `service`, in `accessGroup` when given.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func copyData(account: String) async -> (status: Int32, data: Data?) {
        var query = baseQuery(account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result as? Data)
    }

    public func probe(account: String) async -> Int32 {
        var query = baseQuery(account)
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        // A context that may not show UI: a protected item answers errSecInteractionNotAllowed instead of
        // prompting (kSecUseAuthenticationUIFail is deprecated since iOS 14).
        let context = LAContext()
        context.interactionNotAllowed = true
        query[kSecUseAuthenticationContext as String] = context
        var result: CFTypeRef?
        return SecItemCopyMatching(query as CFDictionary, &result)
    }

    public func add(account: String, data: Data) async -> Int32 {
        var query = baseQuery(account)
        query[kSecAttrAccessible as String] = kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        query[kSecValueData as String] = data
        return SecItemAdd(query as CFDictionary, nil)
    }

    public func update(account: String, data: Data) async -> Int32 {
        let attributes: [String: Any] = [kSecValueData as String: data]
        return SecItemUpdate(baseQuery(account) as CFDictionary, attributes as CFDictionary)
    }

    public func delete(account: String) async -> Int32 {
        SecItemDelete(baseQuery(account) as CFDictionary)
    }

    public func isPasscodeSet() async -> Bool {
        var error: NSError?
        if LAContext().canEvaluatePolicy(.deviceOwnerAuthentication, error: &error) { return true }
        return error?.code != LAError.Code.passcodeNotSet.rawValue
    }

    private func baseQuery(_ account: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}

extension KeychainSecureStore {
    /// The app's store in the system Keychain: items of `service` (your bundle id is a good choice), shared
    /// with extensions through `accessGroup` when given.
    public static func system(service: String, accessGroup: String? = nil) -> KeychainSecureStore {
        KeychainSecureStore(backend: SystemKeychain(service: service, accessGroup: accessGroup))
    }
}
#endif
