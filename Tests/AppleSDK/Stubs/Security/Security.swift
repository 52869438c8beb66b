internal import AppleDeviceSimulation
// Security as the iOS 18 SDK declares it to Swift, for the parts BioAuth uses, over a scripted in-memory Keychain
// (AppleDeviceSimulation). Declarations from developer.apple.com/documentation/security: SecItemCopyMatching, SecItemAdd,
// SecItemUpdate, SecItemDelete, SecAccessControlCreateWithFlags, SecAccessControlCreateFlags, the kSec attribute keys and
// values used, and the OSStatus codes errSecSuccess, errSecItemNotFound, errSecDuplicateItem, errSecAuthFailed,
// errSecInteractionNotAllowed.
//
// CoreFoundation's types are toll-free bridged to Foundation's on Apple platforms; on Linux they are declared here as
// Foundation's classes (CFString = NSString, CFDictionary = NSDictionary, CFError = NSError), so `as String`,
// `as CFDictionary` and `&error` type-check as they do in Xcode.
import Foundation

public typealias OSStatus = Int32
public typealias CFTypeRef = AnyObject
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFError = NSError
/// A memory allocator (only its default is used).
public final class CFAllocator {}
public let kCFAllocatorDefault: CFAllocator! = CFAllocator()

public var errSecSuccess: OSStatus { 0 }
public var errSecItemNotFound: OSStatus { -25300 }
public var errSecDuplicateItem: OSStatus { -25299 }
public var errSecAuthFailed: OSStatus { -25293 }
public var errSecInteractionNotAllowed: OSStatus { -25308 }
public var errSecParam: OSStatus { -50 }

public let kSecClass: CFString = "class"
public let kSecClassGenericPassword: CFString = "genp"
public let kSecAttrService: CFString = "svce"
public let kSecAttrAccount: CFString = "acct"
public let kSecAttrAccessGroup: CFString = "agrp"
public let kSecAttrAccessible: CFString = "pdmn"
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public let kSecValueData: CFString = "v_Data"
public let kSecReturnData: CFString = "r_Data"
public let kSecReturnAttributes: CFString = "r_Attributes"
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"
public let kSecUseDataProtectionKeychain: CFString = "nleg"
public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"

/// Access-control flags of keychain items and keys.
public struct SecAccessControlCreateFlags: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
}

/// An access control object.
public final class SecAccessControl {
    /// The protection class (a `kSecAttrAccessible…` value) and flags it was made with: for the simulated Enclave only.
    @_spi(Simulation) public let protection: String
    @_spi(Simulation) public let flags: SecAccessControlCreateFlags
    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }
}

/// Makes an access control object; `nil` (with `error`) for a protection that is not a `kSecAttrAccessible…` value.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?,
    _ protection: CFTypeRef,
    _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    guard let protection = protection as? NSString,
        [kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly].contains(protection)
    else {
        error?.pointee = Unmanaged.passRetained(NSError(domain: NSOSStatusErrorDomain, code: Int(errSecParam)))
        return nil
    }
    return SecAccessControl(protection: protection as String, flags: flags)
}

/// Looks up one item. With `kSecReturnData` the result is the item's data; with `kSecReturnAttributes` a dictionary.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    let device = SimulatedDevice.current
    if let failure = device.nextKeychainFailure() { return failure }
    guard let (key, query) = itemKey(query) else { return errSecParam }
    guard let item = device.keychainCopy(key) else { return errSecItemNotFound }
    // Items here carry no access control, so a context that may not show UI reads them like any other; a locked
    // device's errSecInteractionNotAllowed is scripted with SimulatedDevice.failKeychain.
    if query[kSecReturnData as String] as? Bool == true {
        result?.pointee = (item[kSecValueData as String] as? Data).map { NSData(data: $0) }
    } else if query[kSecReturnAttributes as String] as? Bool == true {
        result?.pointee = NSDictionary(dictionary: item.filter { $0.key != kSecValueData as String })
    }
    return errSecSuccess
}

/// Adds an item; `errSecDuplicateItem` if one with its service and account exists.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    let device = SimulatedDevice.current
    if let failure = device.nextKeychainFailure() { return failure }
    guard let (key, item) = itemKey(attributes) else { return errSecParam }
    guard device.passcodeSet || (item[kSecAttrAccessible as String] as? String) != kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String
    else { return errSecAuthFailed }  // WhenPasscodeSet items can't be stored without a passcode
    guard device.keychainCopy(key) == nil else { return errSecDuplicateItem }
    device.keychainStore(key, item)
    return errSecSuccess
}

/// Updates the item `query` finds with `attributesToUpdate`.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    let device = SimulatedDevice.current
    if let failure = device.nextKeychainFailure() { return failure }
    guard let (key, _) = itemKey(query) else { return errSecParam }
    guard var item = device.keychainCopy(key) else { return errSecItemNotFound }
    for (name, value) in attributesToUpdate { if let name = name as? String { item[name] = value } }
    device.keychainStore(key, item)
    return errSecSuccess
}

/// Deletes the item `query` finds.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    let device = SimulatedDevice.current
    if let failure = device.nextKeychainFailure() { return failure }
    guard let (key, _) = itemKey(query) else { return errSecParam }
    guard device.keychainCopy(key) != nil else { return errSecItemNotFound }
    device.keychainStore(key, nil)
    return errSecSuccess
}

/// The stored item's key (service and account of a generic password) and the query as a Swift dictionary.
private func itemKey(_ query: CFDictionary) -> (String, [String: Any])? {
    var dictionary: [String: Any] = [:]
    for (name, value) in query { if let name = name as? String { dictionary[name] = value } }
    guard dictionary[kSecClass as String] as? String == kSecClassGenericPassword as String,
        let service = dictionary[kSecAttrService as String] as? String, let account = dictionary[kSecAttrAccount as String] as? String
    else { return nil }
    return ("\(service)\u{0}\(account)", dictionary)
}
