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
/// The private keys are plain bytes in the given ``SecureStore``: this is for tests and simulators only.
public actor SoftwareDeviceKeyStore: DeviceKeyStore {
    private struct Record: Codable {
        var privateKey: Data
        var enrollment: Data
    }

    private let authenticator: SimulatedAuthenticator
    private let storage: any SecureStore

    /// Keys unlocked by `authenticator`, kept in `storage` (in memory by default).
    public init(authenticator: SimulatedAuthenticator, storage: any SecureStore = InMemorySecureStore()) {
        self.authenticator = authenticator
        self.storage = storage
    }

    public func createKey(tag: String) async throws -> DevicePublicKey {
        let key = try storageKey(tag)
        switch await authenticator.availability(for: .biometrics) {
        case .available:
            break
        case .unavailable(let error) where error.code == .biometryLockout:
            break  // a locked-out sensor still has an enrollment; creating a key does not prompt
        case .unavailable(let error):
            throw error
        }
        guard try await storage.data(forKey: key) == nil else {
            throw BiometricError(.keyAlreadyExists, reason: "a device key with this tag exists")
        }
        let privateKey = P256.Signing.PrivateKey()
        let record = Record(privateKey: privateKey.rawRepresentation, enrollment: await authenticator.enrollment)
        try await storage.set(try JSONEncoder().encode(record), forKey: key)
        return DevicePublicKey(privateKey.publicKey)
    }

    public func publicKey(tag: String) async throws -> DevicePublicKey? {
        guard let record = try await record(tag) else { return nil }
        return DevicePublicKey(try Self.privateKey(record).publicKey)
    }

    public func keyState(tag: String) async -> DeviceKeyState {
        guard let record = try? await record(tag) else { return .absent }
        return record.enrollment == (await authenticator.enrollment) ? .valid : .invalidated
    }

    public func sign(_ message: Data, tag: String, context: AuthenticationContext) async throws -> Data {
        guard let record = try await record(tag) else {
            throw BiometricError(.keyNotFound, reason: "no device key with this tag")
        }
        guard record.enrollment == (await authenticator.enrollment) else {
            try await storage.removeValue(forKey: try storageKey(tag))
            throw BiometricError(.keyInvalidated, reason: "the biometric enrollment changed since the key was made")
        }
        guard await authenticator.consume(context) else {
            throw BiometricError(
                .authenticationRequired, reason: "the context is not an unused successful biometric evaluation")
        }
        do {
            return try Self.privateKey(record).signature(for: message).derRepresentation
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "signing failed")
        }
    }

    public func deleteKey(tag: String) async throws {
        try await storage.removeValue(forKey: try storageKey(tag))
    }

    private func record(_ tag: String) async throws -> Record? {
        guard let data = try await storage.data(forKey: try storageKey(tag)) else { return nil }
        do {
            return try JSONDecoder().decode(Record.self, from: data)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "the stored key record is unreadable")
        }
    }

    private func storageKey(_ tag: String) throws -> String {
        let key = "bioauth.softkey." + tag
        do {
            try InMemorySecureStore.validate(key: key)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "a key tag is 1-112 characters of A-Z a-z 0-9 . _ -")
        }
        return key
    }

    private static func privateKey(_ record: Record) throws -> P256.Signing.PrivateKey {
        do {
            return try P256.Signing.PrivateKey(rawRepresentation: record.privateKey)
        } catch {
            throw BiometricError(.keyOperationFailed, reason: "the stored key record is unreadable")
        }
    }
}
