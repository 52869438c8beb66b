// Code written as Apple's documentation shows it, which compiles in Xcode: it must compile here without warnings.
import CryptoKit
import DeviceCheck
import Foundation
import LocalAuthentication
import Security
import UIKit

func authenticate() async throws -> Bool {
    let context = LAContext()
    var error: NSError?
    guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else { return false }
    context.localizedCancelTitle = "Enter Username/Password"
    return try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "Log in to your account")
}

func readPassword(account: String) -> Data? {
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account,
        kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitOne,
    ]
    var item: CFTypeRef?
    guard SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess else { return nil }
    return item as? Data
}

func makeEnclaveKey() throws -> Data {
    var error: Unmanaged<CFError>?
    guard
        let access = SecAccessControlCreateWithFlags(
            kCFAllocatorDefault,
            kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
            [.privateKeyUsage, .biometryCurrentSet],
            &error
        )
    else { throw error!.takeRetainedValue() as Error }
    let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
    return key.publicKey.x963Representation
}

func attestedKeyID() async throws -> String? {
    let service = DCAppAttestService.shared
    guard service.isSupported else { return nil }
    return try await service.generateKey()
}

@MainActor func deviceName() -> String { UIDevice.current.name }
@MainActor func deviceModel() -> String { UIDevice.current.model }
