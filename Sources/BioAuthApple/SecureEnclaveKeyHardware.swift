#if canImport(CryptoKit) && canImport(LocalAuthentication) && canImport(Security)
import BioAuthClient
import CryptoKit
import Foundation
import LocalAuthentication
import Security

/// ``KeyHardware`` in the Secure Enclave: P-256 signing keys made with `.privateKeyUsage` and
/// `.biometryCurrentSet` under `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`. The private key never
/// leaves the Enclave; its `dataRepresentation` (an encrypted blob only this device's Enclave can use) is the
/// handle that `HardwareKeyStore` keeps in the Keychain.
///
/// Signing uses the `LAContext` that `LocalAuthenticator` evaluated, so the payment prompt the user saw
/// ("Pay ¥88.00 to Coffee Shop") is the one that unlocks the signature, and no second prompt appears.
///
/// Not run on a device: compiled on Linux against stand-ins for the SDK's declarations and run against a scripted
/// phone (docs/APPLE.md, "Proven on Linux").
public struct SecureEnclaveKeyHardware: KeyHardware {
    /// Secure Enclave hardware.
    public init() {}

    public var isAvailable: Bool { SecureEnclave.isAvailable }

    public func makeKey() async throws -> (handle: Data, publicKey: Data) {
        guard SecureEnclave.isAvailable else {
            throw BiometricError(.secureEnclaveUnavailable, reason: "no Secure Enclave (the Simulator has none)")
        }
        var error: Unmanaged<CFError>?
        guard
            let access = SecAccessControlCreateWithFlags(
                kCFAllocatorDefault,
                kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
                [.privateKeyUsage, .biometryCurrentSet],
                &error
            )
        else {
            throw BiometricError(.keyOperationFailed, reason: "access control could not be made")
        }
        do {
            let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
            return (key.dataRepresentation, key.publicKey.x963Representation)
        } catch {
            // Without a passcode or enrollment the Enclave refuses `.biometryCurrentSet`.
            throw BiometricError(.keyOperationFailed, reason: "the Secure Enclave did not make the key")
        }
    }

    public func sign(_ message: Data, handle: Data, context: AuthenticationContext) async throws -> Data {
        guard let laContext = LocalAuthenticator.laContext(of: context) else {
            throw BiometricError(.authenticationRequired, reason: "the context was not evaluated by LocalAuthenticator")
        }
        let key: SecureEnclave.P256.Signing.PrivateKey
        do {
            key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: handle, authenticationContext: laContext)
        } catch {
            // The Enclave no longer accepts a `.biometryCurrentSet` key after an enrollment change.
            throw BiometricError(.keyInvalidated, reason: "the Secure Enclave refused the key")
        }
        do {
            return try key.signature(for: message).derRepresentation
        } catch let error as NSError where error.domain == LocalAuthenticationMapping.errorDomain {
            throw BiometricError(laErrorCode: error.code)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "the Secure Enclave did not sign")
        }
    }
}

extension HardwareKeyStore {
    /// Device keys in the Secure Enclave, their records in `storage` (the Keychain), unlocked by `authenticator`'s
    /// evaluations.
    public static func secureEnclave(authenticator: LocalAuthenticator, storage: any SecureStore) -> HardwareKeyStore {
        HardwareKeyStore(hardware: SecureEnclaveKeyHardware(), authenticator: authenticator, storage: storage)
    }
}
#endif
