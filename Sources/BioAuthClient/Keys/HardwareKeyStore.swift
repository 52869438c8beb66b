import BioAuthCore
import Foundation

/// The part of a device key store that only hardware can do: make a P-256 key that a biometric unlocks, and
/// sign with it.
///
/// `BioAuthApple`'s `SecureEnclaveKeyHardware` makes Secure Enclave keys with `.biometryCurrentSet` and
/// `.privateKeyUsage`; `BioAuthTesting`'s software hardware behaves the same way in memory. Everything else
/// — tags, records, the enrollment check, error codes — is ``HardwareKeyStore``'s, and is tested on Linux.
public protocol KeyHardware: Sendable {
    /// Whether keys can be made here (`false` on the iOS Simulator without a Secure Enclave).
    var isAvailable: Bool { get async }

    /// Makes a new key. Does not prompt.
    ///
    /// - Returns: an opaque handle to keep (a Secure Enclave key's encrypted `dataRepresentation`, which is
    ///   useless off this device) and the public key in X9.63 form.
    func makeKey() async throws -> (handle: Data, publicKey: Data)

    /// Signs `message` (ECDSA P-256 over SHA-256, DER) with the key behind `handle`, using the evaluated
    /// `context` so that no second prompt is shown.
    ///
    /// - Throws: ``BiometricError`` — `.keyInvalidated` when the hardware refuses the key because the enrollment
    ///   changed, `.authenticationRequired` when `context` does not unlock it, `.keyOperationFailed` otherwise.
    func sign(_ message: Data, handle: Data, context: AuthenticationContext) async throws -> Data
}

/// A ``DeviceKeyStore`` over any ``KeyHardware``: keeps each key's handle, public key and the biometric
/// enrollment it was made under in a ``SecureStore`` (the Keychain on a device).
///
/// - A key is `.invalidated` when the device's enrollment fingerprint (`evaluatedPolicyDomainState`) differs
///   from the one recorded at creation; its record is deleted at its next use, so the app turns biometric
///   sign-in off. A context evaluated under another enrollment (stale, or another device's) is refused
///   without touching the key.
/// - Only a successful `.biometrics` evaluation made under the recorded enrollment may sign; a passcode
///   evaluation unlocks nothing.
/// - Replacing a key silently is refused (`.keyAlreadyExists`): its server binding would be orphaned.
public actor HardwareKeyStore: DeviceKeyStore {
    /// What is kept for each key. Version 1.
    struct Record: Codable {
        var version: Int
        var handle: Data
        var publicKey: Data
        var domainState: Data?
        var createdAt: Date
    }

    private let hardware: any KeyHardware
    private let authenticator: any BiometricAuthenticator
    private let storage: any SecureStore
    private let prefix: String

    /// Keys made by `hardware`, unlocked by evaluations of `authenticator`, recorded in `storage` under
    /// `prefix` + tag.
    public init(
        hardware: any KeyHardware,
        authenticator: any BiometricAuthenticator,
        storage: any SecureStore,
        prefix: String = "bioauth.key."
    ) {
        self.hardware = hardware
        self.authenticator = authenticator
        self.storage = storage
        self.prefix = prefix
    }

    public func createKey(tag: String) async throws -> DevicePublicKey {
        let key = try storageKey(tag)
        guard await hardware.isAvailable else {
            throw BiometricError(.secureEnclaveUnavailable, reason: "this device cannot make hardware keys")
        }
        switch await authenticator.availability(for: .biometrics) {
        case .available:
            break
        case .unavailable(let error) where error.code == .biometryLockout:
            break  // a locked-out sensor still has an enrollment; making a key does not prompt
        case .unavailable(let error):
            throw error
        }
        guard try await readStorage(key) == nil else {
            throw BiometricError(.keyAlreadyExists, reason: "a device key with this tag exists")
        }
        let made = try await hardware.makeKey()
        let publicKey: DevicePublicKey
        do {
            publicKey = try DevicePublicKey(x963Representation: made.publicKey)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "the hardware returned a public key that is not P-256 X9.63")
        }
        let record = Record(
            version: 1,
            handle: made.handle,
            publicKey: made.publicKey,
            domainState: await authenticator.currentDomainState(),
            createdAt: Date()
        )
        try await writeStorage(record, key)
        return publicKey
    }

    public func publicKey(tag: String) async throws -> DevicePublicKey? {
        guard let record = try await record(tag) else { return nil }
        do {
            return try DevicePublicKey(x963Representation: record.publicKey)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "the stored key record is unreadable")
        }
    }

    public func keyState(tag: String) async -> DeviceKeyState {
        guard let record = try? await record(tag) else { return .absent }
        return Self.enrollmentChanged(recorded: record.domainState, current: await authenticator.currentDomainState())
            ? .invalidated : .valid
    }

    public func sign(_ message: Data, tag: String, context: AuthenticationContext) async throws -> Data {
        guard let record = try await record(tag) else {
            throw BiometricError(.keyNotFound, reason: "no device key with this tag")
        }
        guard context.policy == .biometrics else {
            throw BiometricError(.authenticationRequired, reason: "only a biometric evaluation unlocks a device key")
        }
        if Self.enrollmentChanged(recorded: record.domainState, current: await authenticator.currentDomainState()) {
            try await storage.removeValue(forKey: try storageKey(tag))
            throw BiometricError(.keyInvalidated, reason: "the biometric enrollment changed since the key was made")
        }
        // The key is fine but the context was evaluated under another enrollment (stale, or another device's).
        if Self.enrollmentChanged(recorded: record.domainState, current: context.domainState) {
            throw BiometricError(.authenticationRequired, reason: "the context was evaluated under another enrollment")
        }
        do {
            return try await hardware.sign(message, handle: record.handle, context: context)
        } catch let error as BiometricError where error.code == .keyInvalidated {
            try await storage.removeValue(forKey: try storageKey(tag))
            throw error
        } catch let error as BiometricError {
            throw error
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "signing failed")
        }
    }

    public func deleteKey(tag: String) async throws {
        do {
            try await storage.removeValue(forKey: try storageKey(tag))
        } catch let error as SecureStoreError {
            throw BiometricError(.keyOperationFailed, reason: "the key record could not be deleted (\(error.code))")
        }
    }

    /// Whether the enrollment differs. Unknown on either side (biometrics locked out or unavailable, or a
    /// backend without domain state) is not a change: the hardware is the final judge when it signs.
    static func enrollmentChanged(recorded: Data?, current: Data?) -> Bool {
        guard let recorded, let current else { return false }
        return recorded != current
    }

    private func record(_ tag: String) async throws -> Record? {
        guard let data = try await readStorage(try storageKey(tag)) else { return nil }
        guard let record = try? JSONDecoder().decode(Record.self, from: data), record.version == 1 else {
            throw BiometricError(.keyOperationFailed, reason: "the stored key record is unreadable")
        }
        return record
    }

    private func readStorage(_ key: String) async throws -> Data? {
        do {
            return try await storage.data(forKey: key)
        } catch let error as SecureStoreError {
            throw BiometricError(.keyOperationFailed, reason: "the key record could not be read (\(error.code))")
        }
    }

    private func writeStorage(_ record: Record, _ key: String) async throws {
        do {
            try await storage.set(try JSONEncoder().encode(record), forKey: key)
        } catch let error as SecureStoreError {
            throw BiometricError(.keyOperationFailed, reason: "the key record could not be saved (\(error.code))")
        }
    }

    private func storageKey(_ tag: String) throws -> String {
        let key = prefix + tag
        do {
            try SecureStoreKey.validate(key)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "a key tag is 1-\(128 - prefix.utf8.count) characters of A-Z a-z 0-9 . _ -")
        }
        return key
    }
}
