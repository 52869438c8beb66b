import BioAuthClient
import BioAuthCore
import Crypto
import Foundation

/// Device keys in software (swift-crypto P-256) that behave like Secure Enclave keys made with
/// `.biometryCurrentSet` + `.privateKeyUsage`:
///
/// - a key signs only with a context from a successful biometric evaluation of the paired
///   ``SimulatedAuthenticator``, and each context allows one signature;
/// - a passcode (device-owner) evaluation unlocks nothing;
/// - a key made before an enrollment change is invalidated and deleted at its next use.
///
/// It is the portable `HardwareKeyStore` over ``SoftwareKeyHardware``, so every test that uses it also tests
/// the store a device uses. The private keys are plain bytes in the given `SecureStore`: this is for tests
/// and simulators only.
public actor SoftwareDeviceKeyStore: DeviceKeyStore {
    private let store: HardwareKeyStore

    /// Keys unlocked by `authenticator`, kept in `storage` (in memory by default).
    public init(authenticator: SimulatedAuthenticator, storage: any SecureStore = InMemorySecureStore()) {
        store = HardwareKeyStore(hardware: SoftwareKeyHardware(authenticator: authenticator), authenticator: authenticator, storage: storage)
    }

    /// Creates a key under `tag`.
    public func createKey(tag: String) async throws -> DevicePublicKey { try await store.createKey(tag: tag) }
    /// The public key under `tag`, or `nil`.
    public func publicKey(tag: String) async throws -> DevicePublicKey? { try await store.publicKey(tag: tag) }
    /// Whether the key under `tag` is valid, invalidated by an enrollment change, or absent.
    public func keyState(tag: String) async -> DeviceKeyState { await store.keyState(tag: tag) }
    /// Signs `message` with the key under `tag`, unlocked by a biometric `context`.
    public func sign(_ message: Data, tag: String, context: AuthenticationContext) async throws -> Data {
        try await store.sign(message, tag: tag, context: context)
    }
    /// Deletes the key under `tag`.
    public func deleteKey(tag: String) async throws { try await store.deleteKey(tag: tag) }
}

/// `KeyHardware` in software, paired with a ``SimulatedAuthenticator``: like the Secure Enclave, it refuses a
/// key whose enrollment changed (`.biometryCurrentSet`) and signs only with an unused successful biometric
/// context of its authenticator. The handle holds the private key in the clear.
public struct SoftwareKeyHardware: KeyHardware {
    private struct Handle: Codable {
        var privateKey: Data
        var enrollment: Data
    }

    private let authenticator: SimulatedAuthenticator
    /// Whether "this device" can make keys; `false` behaves like the Simulator without a Secure Enclave.
    public let isAvailable: Bool

    /// Hardware unlocked by evaluations of `authenticator`.
    public init(authenticator: SimulatedAuthenticator, isAvailable: Bool = true) {
        self.authenticator = authenticator
        self.isAvailable = isAvailable
    }

    /// A new software P-256 key: its handle and its public key (X9.63).
    public func makeKey() async throws -> (handle: Data, publicKey: Data) {
        let key = P256.Signing.PrivateKey()
        let handle = Handle(privateKey: key.rawRepresentation, enrollment: await authenticator.enrollment)
        return (try JSONEncoder().encode(handle), key.publicKey.x963Representation)
    }

    /// Signs `message` with the key `handle` names, if `context` is a biometric evaluation of the current enrollment.
    public func sign(_ message: Data, handle: Data, context: AuthenticationContext) async throws -> Data {
        guard let handle = try? JSONDecoder().decode(Handle.self, from: handle),
            let key = try? P256.Signing.PrivateKey(rawRepresentation: handle.privateKey)
        else { throw BiometricError(.keyOperationFailed, reason: "the key handle is unreadable") }
        guard handle.enrollment == (await authenticator.enrollment) else {
            throw BiometricError(.keyInvalidated, reason: "the biometric enrollment changed since the key was made")
        }
        guard await authenticator.consume(context) else {
            throw BiometricError(.authenticationRequired, reason: "the context is not an unused successful biometric evaluation")
        }
        do {
            return try key.signature(for: message).derRepresentation
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "signing failed")
        }
    }
}
