import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

@Suite("Simulated authenticator")
struct SimulatedAuthenticatorTests {
    let prompt = PromptCopy(language: .english).prompt(for: .unlockApp, biometry: .faceID)
    let passcodePrompt = PromptCopy(language: .english).prompt(for: .recoverFromLockout, biometry: .faceID)

    @Test("availability is asked first and reports why not, in the device's order")
    func availability() async throws {
        #expect(await SimulatedAuthenticator().availability(for: .biometrics) == .available(.faceID))
        #expect(await SimulatedAuthenticator(.init(kind: .touchID)).availability(for: .biometrics).kind == .touchID)
        let noSensor = SimulatedAuthenticator(.init(kind: .none))
        #expect(await noSensor.availability(for: .biometrics) == .unavailable(BiometricError(.biometryNotAvailable)))
        #expect(await noSensor.availability(for: .biometrics).kind == .none)
        let noPasscode = SimulatedAuthenticator(.init(passcodeSet: false))
        #expect(await noPasscode.availability(for: .biometrics) == .unavailable(BiometricError(.passcodeNotSet)))
        #expect(await noPasscode.availability(for: .deviceOwner) == .unavailable(BiometricError(.passcodeNotSet)))
        let notEnrolled = SimulatedAuthenticator(.init(enrolled: false))
        #expect(await notEnrolled.availability(for: .biometrics) == .unavailable(BiometricError(.biometryNotEnrolled)))
        #expect(await notEnrolled.availability(for: .deviceOwner).isAvailable)
        #expect(await notEnrolled.currentDomainState() == nil)
    }

    @Test("a match succeeds and the prompt is recorded as shown")
    func match() async throws {
        let sensor = SimulatedAuthenticator()
        await sensor.script(.match)
        let context = try await sensor.evaluate(prompt)
        #expect(context.policy == .biometrics)
        #expect(context.biometryKind == .faceID)
        #expect(context.domainState == (await sensor.currentDomainState()))
        #expect(await sensor.presentedPrompts == [prompt])
    }

    @Test("3 non-matches end one prompt with -1; a match in between resets the count")
    func threeNonMatches() async throws {
        let sensor = SimulatedAuthenticator()
        await sensor.script(.nonMatch, .nonMatch, .nonMatch)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .authenticationFailed)
        #expect(await sensor.consecutiveFailures == 3)
        await sensor.script(.nonMatch, .match)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == nil)
        #expect(await sensor.consecutiveFailures == 0)
    }

    @Test("5 consecutive failures lock biometrics until the passcode is entered")
    func lockout() async throws {
        let sensor = SimulatedAuthenticator()
        await sensor.script(.nonMatch, .nonMatch, .nonMatch, .nonMatch, .nonMatch)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .authenticationFailed)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .biometryLockout)
        #expect(await sensor.isLockedOut)
        #expect(await sensor.availability(for: .biometrics) == .unavailable(BiometricError(.biometryLockout)))
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .biometryLockout)
        // A face is ignored on the passcode screen; the passcode turns biometrics back on.
        await sensor.script(.match, .passcode)
        let context = try await sensor.evaluate(passcodePrompt)
        #expect(context.policy == .deviceOwner)
        #expect(context.biometryKind == .none)
        #expect(await sensor.availability(for: .biometrics).isAvailable)
        await sensor.script(.match)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == nil)
    }

    @Test("cancel, fallback and system cancel end the prompt with -2, -3 and -4")
    func userChoices() async throws {
        let sensor = SimulatedAuthenticator()
        await sensor.script(.cancel)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .userCancel)
        await sensor.script(.fallback)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .userFallback)
        await sensor.script(.systemCancel)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .systemCancel)
        await sensor.script(.passcode, .match)  // no passcode field on a biometrics-only prompt
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == nil)
    }

    @Test("an empty fallback title hides the button, so tapping where it would be does nothing")
    func hiddenFallback() async throws {
        let sensor = SimulatedAuthenticator()
        let hidden = PromptCopy(language: .english).prompt(for: .enableBiometricSignIn, biometry: .faceID)
        await sensor.script(.fallback, .match)
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(hidden) } == nil)
    }

    @Test("evaluating while the app is inactive fails with -1004; going inactive ends a prompt with -4")
    func appActivity() async throws {
        let sensor = SimulatedAuthenticator(.init(appActive: false))
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(prompt) } == .notInteractive)
        #expect(await sensor.presentedPrompts.isEmpty)
        await sensor.setAppActive(true)
        let evaluation = Task { try await sensor.evaluate(prompt) }
        try await waitUntil { await sensor.isPromptVisible }
        await sensor.setAppActive(false)
        #expect(try await biometricErrorCode { _ = try await evaluation.value } == .systemCancel)
    }

    @Test("onPresent tells of a prompt the moment it shows, before the user answers it")
    func presentObserver() async throws {
        let sensor = SimulatedAuthenticator()
        let seen = Seen()
        await sensor.onPresent { seen.add($0.reason) }
        let evaluation = Task { try await sensor.evaluate(prompt) }
        try await waitUntil { await sensor.isWaitingForUser }
        #expect(seen.reasons == [prompt.reason], "told while the prompt waits for the user")
        await sensor.perform(.match)
        _ = try await evaluation.value
        #expect(seen.reasons == [prompt.reason])
    }

    /// What an observer saw, from any thread.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [String] = []
        func add(_ reason: String) { lock.withLock { all.append(reason) } }
        var reasons: [String] { lock.withLock { all } }
    }

    @Test("cancelling the task ends a prompt that never answers with -9, like invalidate()")
    func cancellation() async throws {
        let sensor = SimulatedAuthenticator()
        await sensor.script(.neverAnswers)
        let evaluation = Task { try await sensor.evaluate(prompt) }
        try await waitUntil { await sensor.isPromptVisible }
        await sensor.perform(.match)  // ignored: the prompt hangs
        evaluation.cancel()
        #expect(try await biometricErrorCode { _ = try await evaluation.value } == .appCancel)
        #expect(await !sensor.isPromptVisible)
    }

    @Test("a prompt waits for the user, who answers it later")
    func waitsForUser() async throws {
        let sensor = SimulatedAuthenticator()
        let evaluation = Task { try await sensor.evaluate(prompt) }
        try await waitUntil { await sensor.isPromptVisible }
        await sensor.perform(.match)
        #expect(try await evaluation.value.policy == .biometrics)
    }

    @Test("an empty reason is refused before anything is shown")
    func emptyReason() async throws {
        let sensor = SimulatedAuthenticator()
        #expect(try await biometricErrorCode { _ = try await sensor.evaluate(BiometricPrompt(policy: .biometrics, reason: "")) } == .invalidPrompt)
        #expect(await sensor.presentedPrompts.isEmpty)
    }

    @Test("changing enrollment changes the domain state")
    func domainState() async throws {
        let sensor = SimulatedAuthenticator()
        let before = try #require(await sensor.currentDomainState())
        await sensor.changeEnrollment()
        let after = try #require(await sensor.currentDomainState())
        #expect(before != after)
        await sensor.setEnrolled(false)
        #expect(await sensor.currentDomainState() == nil)
    }
}

@Suite("Simulated authenticator state")
struct SimulatedAuthenticatorStateTests {
    @Test("a restored device keeps its enrollment, failures, lockout and unused outcomes; its keys stay valid")
    func restore() async throws {
        let sensor = SimulatedAuthenticator(.init(kind: .touchID))
        let storage = InMemorySecureStore()
        let keys = SoftwareDeviceKeyStore(authenticator: sensor, storage: storage)
        _ = try await keys.createKey(tag: "k")
        await sensor.script(.nonMatch, .nonMatch, .nonMatch, .nonMatch, .nonMatch)
        let prompt = PromptCopy(language: .english).prompt(for: .unlockApp, biometry: .touchID)
        _ = try? await sensor.evaluate(prompt)
        _ = try? await sensor.evaluate(prompt)
        await sensor.script(.passcode, .match)
        let saved = try JSONEncoder().encode(await sensor.state)

        let restored = SimulatedAuthenticator(restoring: try JSONDecoder().decode(SimulatedAuthenticator.State.self, from: saved))
        #expect(await restored.kind == .touchID)
        #expect(await restored.isLockedOut)
        #expect(await restored.consecutiveFailures == 5)
        #expect(await restored.queuedOutcomes == [.passcode, .match])
        #expect(await SoftwareDeviceKeyStore(authenticator: restored, storage: storage).keyState(tag: "k") == .valid)
        await restored.changeEnrollment()
        // Locked out, the device can't tell its enrollment (as LocalAuthentication); after the passcode it can.
        #expect(await SoftwareDeviceKeyStore(authenticator: restored, storage: storage).keyState(tag: "k") == .valid)
        _ = try await restored.evaluate(PromptCopy(language: .english).prompt(for: .recoverFromLockout, biometry: .touchID))
        #expect(await SoftwareDeviceKeyStore(authenticator: restored, storage: storage).keyState(tag: "k") == .invalidated)
    }
}
