import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

@Suite("Software device key store")
struct SoftwareDeviceKeyStoreTests {
    let sensor = SimulatedAuthenticator()
    let prompt = PromptCopy(language: .english).prompt(for: .signIn, biometry: .faceID)
    let message = Data("challenge".utf8)

    func matched() async throws -> AuthenticationContext {
        await sensor.script(.match)
        return try await sensor.evaluate(prompt)
    }

    @Test("a key signs after a biometric match, and the signature verifies with its public key")
    func signs() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        let publicKey = try await keys.createKey(tag: "login")
        #expect(try await keys.publicKey(tag: "login") == publicKey)
        #expect(await keys.keyState(tag: "login") == .valid)
        let signature = try await keys.sign(message, tag: "login", context: try await matched())
        #expect(publicKey.isValidSignature(signature, for: message))
    }

    @Test("a context allows one signature only")
    func singleUse() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        _ = try await keys.createKey(tag: "login")
        let context = try await matched()
        _ = try await keys.sign(message, tag: "login", context: context)
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: context) } == .authenticationRequired)
    }

    @Test("a forged context, a passcode context or another device's context unlocks nothing")
    func refusedContexts() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        _ = try await keys.createKey(tag: "login")
        let forged = AuthenticationContext(
            policy: .biometrics,
            biometryKind: .faceID,
            domainState: await sensor.currentDomainState(),
            evaluatedAt: Date()
        )
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: forged) } == .authenticationRequired)
        await sensor.script(.passcode)
        let passcode = try await sensor.evaluate(PromptCopy(language: .english).prompt(for: .recoverFromLockout, biometry: .faceID))
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: passcode) } == .authenticationRequired)
        let otherPhone = SimulatedAuthenticator()
        await otherPhone.script(.match)
        let foreign = try await otherPhone.evaluate(prompt)
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: foreign) } == .authenticationRequired)
    }

    @Test("an enrollment change invalidates the key for good (.biometryCurrentSet)")
    func enrollmentChange() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        _ = try await keys.createKey(tag: "login")
        let contextBefore = try await matched()
        await sensor.changeEnrollment()
        #expect(await keys.keyState(tag: "login") == .invalidated)
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: contextBefore) } == .keyInvalidated)
        #expect(await keys.keyState(tag: "login") == .absent)
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: try await matched()) } == .keyNotFound)
    }

    @Test("a context evaluated before an enrollment change is refused for a new key")
    func staleContext() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        let stale = try await matched()
        await sensor.changeEnrollment()
        _ = try await keys.createKey(tag: "login")
        #expect(try await biometricErrorCode { _ = try await keys.sign(message, tag: "login", context: stale) } == .authenticationRequired)
    }

    @Test("creating needs an enrolled sensor and a passcode, and never replaces a key")
    func creation() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: SimulatedAuthenticator(.init(enrolled: false)))
        #expect(try await biometricErrorCode { _ = try await keys.createKey(tag: "login") } == .biometryNotEnrolled)
        let noPasscode = SoftwareDeviceKeyStore(authenticator: SimulatedAuthenticator(.init(passcodeSet: false)))
        #expect(try await biometricErrorCode { _ = try await noPasscode.createKey(tag: "login") } == .passcodeNotSet)
        let good = SoftwareDeviceKeyStore(authenticator: sensor)
        let first = try await good.createKey(tag: "login")
        #expect(try await biometricErrorCode { _ = try await good.createKey(tag: "login") } == .keyAlreadyExists)
        #expect(try await good.publicKey(tag: "login") == first)
        #expect(try await biometricErrorCode { _ = try await good.createKey(tag: "../escape") } == .keyOperationFailed)
    }

    @Test("deleting removes the key; deleting twice is fine")
    func deletion() async throws {
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        _ = try await keys.createKey(tag: "login")
        try await keys.deleteKey(tag: "login")
        try await keys.deleteKey(tag: "login")
        #expect(await keys.keyState(tag: "login") == .absent)
        #expect(try await keys.publicKey(tag: "login") == nil)
    }
}
