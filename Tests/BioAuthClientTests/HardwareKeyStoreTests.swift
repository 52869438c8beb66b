import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Crypto
import Foundation
import Testing

/// The store a device uses (over the Secure Enclave), tested over hardware that can be told to misbehave.
@Suite("Hardware key store")
struct HardwareKeyStoreTests {
    let sensor = SimulatedAuthenticator()
    let storage = InMemorySecureStore()
    let message = Data("challenge".utf8)

    func store(_ hardware: any KeyHardware) -> HardwareKeyStore {
        HardwareKeyStore(hardware: hardware, authenticator: sensor, storage: storage)
    }

    func matched() async throws -> AuthenticationContext {
        await sensor.script(.match)
        return try await sensor.evaluate(PromptCopy(language: .english).prompt(for: .signIn, biometry: .faceID))
    }

    /// Hardware that answers as told.
    struct ScriptedHardware: KeyHardware {
        var isAvailable = true
        var publicKey = P256.Signing.PrivateKey().publicKey.x963Representation
        var signError: BiometricError?
        func makeKey() async throws -> (handle: Data, publicKey: Data) { (Data("opaque".utf8), publicKey) }
        func sign(_ message: Data, handle: Data, context: AuthenticationContext) async throws -> Data {
            if let signError { throw signError }
            return Data("sig".utf8)
        }
    }

    @Test("the record keeps only the handle and public key; the signature verifies")
    func recordAndSignature() async throws {
        let keys = store(SoftwareKeyHardware(authenticator: sensor))
        let publicKey = try await keys.createKey(tag: "login")
        #expect(try await storage.containsValue(forKey: "bioauth.key.login"))
        #expect(try await keys.publicKey(tag: "login") == publicKey)
        let signature = try await keys.sign(message, tag: "login", context: try await matched())
        #expect(publicKey.isValidSignature(signature, for: message))
    }

    @Test("no Secure Enclave (the Simulator): a clear error, nothing stored")
    func noEnclave() async throws {
        let keys = store(SoftwareKeyHardware(authenticator: sensor, isAvailable: false))
        #expect(try await biometricErrorCode { _ = try await keys.createKey(tag: "login") } == .secureEnclaveUnavailable)
        #expect(await keys.keyState(tag: "login") == .absent)
    }

    @Test("not enrolled or no passcode: the sensor's own error; a taken tag is refused, not replaced")
    func creationRefusals() async throws {
        let bare = SimulatedAuthenticator(.init(enrolled: false))
        let keys = HardwareKeyStore(hardware: SoftwareKeyHardware(authenticator: bare), authenticator: bare, storage: storage)
        #expect(try await biometricErrorCode { _ = try await keys.createKey(tag: "login") } == .biometryNotEnrolled)
        let good = store(SoftwareKeyHardware(authenticator: sensor))
        let first = try await good.createKey(tag: "login")
        #expect(try await biometricErrorCode { _ = try await good.createKey(tag: "login") } == .keyAlreadyExists)
        #expect(try await good.publicKey(tag: "login") == first)
        #expect(try await biometricErrorCode { _ = try await good.createKey(tag: "bad tag/..") } == .keyOperationFailed)
    }

    @Test("a passcode evaluation unlocks nothing")
    func passcodeRefused() async throws {
        let keys = store(SoftwareKeyHardware(authenticator: sensor))
        _ = try await keys.createKey(tag: "login")
        await sensor.script(.passcode)
        let passcode = try await sensor.evaluate(PromptCopy(language: .english).prompt(for: .recoverFromLockout, biometry: .faceID))
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: passcode) } == .authenticationRequired)
    }

    @Test("an enrollment change invalidates the key without a prompt, and its next use deletes it")
    func enrollmentChange() async throws {
        let keys = store(SoftwareKeyHardware(authenticator: sensor))
        _ = try await keys.createKey(tag: "login")
        await sensor.changeEnrollment()
        #expect(await keys.keyState(tag: "login") == .invalidated)
        #expect(await sensor.presentedPrompts.isEmpty)
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: try await matched()) } == .keyInvalidated)
        #expect(await keys.keyState(tag: "login") == .absent)
    }

    @Test("the hardware's own refusal (enrollment changed) also deletes the record")
    func hardwareInvalidation() async throws {
        let keys = store(ScriptedHardware(signError: BiometricError(.keyInvalidated)))
        _ = try await keys.createKey(tag: "login")
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: try await matched()) } == .keyInvalidated)
        #expect(await keys.keyState(tag: "login") == .absent)
        let failing = store(ScriptedHardware(signError: BiometricError(.keyOperationFailed)))
        _ = try await failing.createKey(tag: "other")
        #expect(
            try await biometricErrorCode { _ = try await failing.sign(message, tag: "other", context: try await matched()) } == .keyOperationFailed
        )
        #expect(await failing.keyState(tag: "other") == .valid)
    }

    @Test("hardware returning a malformed public key, or a corrupt record, gives a clear error")
    func malformed() async throws {
        let keys = store(ScriptedHardware(publicKey: Data([0x04, 0x01])))
        #expect(try await biometricErrorCode { _ = try await keys.createKey(tag: "login") } == .keyOperationFailed)
        #expect(await keys.keyState(tag: "login") == .absent)
        try await storage.set(Data("{not json".utf8), forKey: "bioauth.key.broken")
        let reader = store(SoftwareKeyHardware(authenticator: sensor))
        #expect(try await biometricErrorCode { _ = try await reader.publicKey(tag: "broken") } == .keyOperationFailed)
        #expect(
            try await biometricErrorCode { _ = try await reader.sign(message, tag: "broken", context: try await matched()) } == .keyOperationFailed
        )
    }

    @Test("while biometrics are locked out the enrollment is unknown, which is not a change")
    func lockedOutIsNotInvalidation() async throws {
        let keys = store(SoftwareKeyHardware(authenticator: sensor))
        _ = try await keys.createKey(tag: "login")
        await sensor.script(.nonMatch, .nonMatch, .nonMatch, .nonMatch, .nonMatch)
        let prompt = PromptCopy(language: .english).prompt(for: .signIn, biometry: .faceID)
        _ = try? await sensor.evaluate(prompt)
        _ = try? await sensor.evaluate(prompt)
        #expect(await sensor.isLockedOut)
        #expect(await keys.keyState(tag: "login") == .valid)
    }
}

extension HardwareKeyStoreTests {
    @Test("a context from another enrollment is refused and the valid key is kept")
    func staleContextKeepsKey() async throws {
        let keys = store(SoftwareKeyHardware(authenticator: sensor))
        let other = SimulatedAuthenticator()
        await other.script(.match)
        let foreign = try await other.evaluate(PromptCopy(language: .english).prompt(for: .signIn, biometry: .faceID))
        _ = try await keys.createKey(tag: "login")
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: foreign) } == .authenticationRequired)
        #expect(await keys.keyState(tag: "login") == .valid)
    }
}
