import BioAuthCore
import Foundation

/// Device keys: P-256 signing keys that only a successful biometric evaluation unlocks.
///
/// `BioAuthApple`'s `SecureEnclaveKeyStore` keeps them in the Secure Enclave with `.biometryCurrentSet` and
/// `.privateKeyUsage`; `BioAuthTesting`'s `SoftwareDeviceKeyStore` behaves the same way in software. Keys
/// are addressed by a caller-chosen tag. Every method throws ``BiometricError``.
public protocol DeviceKeyStore: Sendable {
    /// Creates a key under `tag` and returns its public half. Needs biometrics enrolled and a device
    /// passcode; does not prompt.
    ///
    /// - Throws: ``BiometricError/Code-swift.struct/keyAlreadyExists`` when `tag` is taken (delete first:
    ///   replacing a key silently would orphan its server binding).
    func createKey(tag: String) async throws -> DevicePublicKey

    /// The public key under `tag`, or `nil` when there is none. Does not prompt.
    func publicKey(tag: String) async throws -> DevicePublicKey?

    /// Whether the key under `tag` exists and is still usable. Does not prompt.
    func keyState(tag: String) async -> DeviceKeyState

    /// Signs `message` (ECDSA P-256 / SHA-256, DER-encoded) with the key under `tag`, unlocked by `context`.
    ///
    /// - Throws: ``BiometricError/Code-swift.struct/authenticationRequired`` when `context` is not a
    ///   successful biometric evaluation this store accepts, ``BiometricError/Code-swift.struct/keyInvalidated``
    ///   when the enrollment changed since the key was made (the key is gone for good),
    ///   ``BiometricError/Code-swift.struct/keyNotFound`` when there is no key.
    func sign(_ message: Data, tag: String, context: AuthenticationContext) async throws -> Data

    /// Deletes the key under `tag`. Deleting a key that does not exist is not an error.
    func deleteKey(tag: String) async throws
}

/// Whether a device key can be used.
public enum DeviceKeyState: String, Hashable, Sendable {
    /// No key under that tag.
    case absent
    /// The key exists and the enrollment it was made under is unchanged.
    case valid
    /// The biometric enrollment changed since the key was made; it can never sign again.
    case invalidated
}
