import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

@Suite("App lock")
struct AppLockTests {
    let phone = TestPhone()
    let clock = ManualClock()

    func lock(_ session: SessionMachine, grace: TimeInterval = 30, active: Bool = true, keys: (any DeviceKeyStore)? = nil) -> AppLock {
        AppLock(
            session: session,
            authenticator: phone.sensor,
            keyStore: keys ?? phone.keys,
            clock: clock,
            configuration: .init(gracePeriod: grace, language: .simplifiedChinese),
            isActive: active
        )
    }

    @Test("back within the grace period stays unlocked; after it, the app locks")
    func gracePeriod() async throws {
        let session = try await phone.signedInWithBiometrics()
        let appLock = lock(session)
        await appLock.didEnterBackground()
        clock.advance(by: 30)
        #expect(try await appLock.willEnterForeground() == .unlocked)
        await appLock.didEnterBackground()
        clock.advance(by: 31)
        #expect(try await appLock.willEnterForeground() == .locked)
        #expect(await flags(session) == "YES | YES | NO")
    }

    @Test("a clock turned back while away locks the app")
    func clockTurnedBack() async throws {
        let session = try await phone.signedInWithBiometrics()
        let appLock = lock(session)
        await appLock.didEnterBackground()
        clock.advance(by: -3600)
        #expect(try await appLock.willEnterForeground() == .locked)
    }

    @Test("without biometric sign-in there is nothing to lock with")
    func noBiometrics() async throws {
        let session = try await phone.launch()
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        try await session.handle(.biometricSignInDeclined)
        let appLock = lock(session)
        await appLock.didEnterBackground()
        clock.advance(by: 3600)
        #expect(try await appLock.willEnterForeground() == .unlocked)
    }

    @Test("unlock: the prompt in the app's language, a key signature, then unlocked")
    func unlock() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session)
        await phone.sensor.script(.match)
        #expect(try await appLock.unlock() == .unlocked)
        #expect(await phone.sensor.presentedPrompts.map(\.reason) == ["使用面容 ID 解锁以继续"])
        #expect(await flags(session) == "YES | YES | YES")
        // Unlocking an unlocked app shows nothing.
        #expect(try await appLock.unlock() == .unlocked)
        #expect(await phone.sensor.presentedPrompts.count == 1)
    }

    @Test("a prompt requested while the app is inactive waits for did-become-active instead of failing with -1004")
    func waitsForActive() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        await phone.sensor.setAppActive(false)
        let appLock = lock(session, active: false)
        let unlocking = Task { try await appLock.unlock() }
        for _ in 0..<50 { await Task.yield() }
        #expect(await phone.sensor.presentedPrompts.isEmpty)
        #expect(await session.state == .locked)
        await phone.sensor.setAppActive(true)
        await appLock.didBecomeActive()
        try await waitUntil { await phone.sensor.isPromptVisible }
        await phone.sensor.perform(.match)
        #expect(try await unlocking.value == .unlocked)
    }

    @Test("concurrent unlock requests share one prompt")
    func coalesced() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session)
        async let first = appLock.unlock()
        async let second = appLock.unlock()
        try await waitUntil { await phone.sensor.isPromptVisible }
        await phone.sensor.perform(.match)
        #expect(try await [first, second] == [.unlocked, .unlocked])
        #expect(await phone.sensor.presentedPrompts.count == 1)
    }

    @Test("cancelling while waiting for the app to become active ends with app_cancel and shows nothing")
    func cancelWhileWaiting() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session, active: false)
        let unlocking = Task { try await appLock.unlock() }
        for _ in 0..<20 { await Task.yield() }
        unlocking.cancel()
        #expect(try await biometricErrorCode { _ = try await unlocking.value } == .appCancel)
        #expect(await phone.sensor.presentedPrompts.isEmpty)
        #expect(await session.state == .locked)
    }

    @Test("“Use Password” ends the session; cancel keeps the app locked")
    func fallbackAndCancel() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session)
        await phone.sensor.script(.cancel)
        #expect(try await biometricErrorCode { _ = try await appLock.unlock() } == .userCancel)
        #expect(await session.state == .locked)
        await phone.sensor.script(.fallback)
        #expect(try await biometricErrorCode { _ = try await appLock.unlock() } == .userFallback)
        #expect(await flags(session) == "NO | YES | NO")
    }

    @Test("5 non-matching faces lock out; the passcode turns Face ID back on; then it unlocks")
    func lockoutRecovery() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session)
        await phone.sensor.script(.nonMatch, .nonMatch, .nonMatch)
        #expect(try await biometricErrorCode { _ = try await appLock.unlock() } == .authenticationFailed)
        await phone.sensor.script(.nonMatch, .nonMatch)
        let lockout = try await biometricErrorCode { _ = try await appLock.unlock() }
        #expect(lockout == .biometryLockout)
        #expect(BiometricError(.biometryLockout).recovery == .enterPasscode)
        #expect(try await biometricErrorCode { _ = try await appLock.unlock() } == .biometryLockout)
        #expect(await session.state == .locked)
        await phone.sensor.script(.passcode)
        try await appLock.recoverFromLockout()
        #expect(await phone.sensor.presentedPrompts.last?.reason == "输入设备密码以重新启用面容 ID")
        #expect(await session.state == .locked)  // the passcode alone does not unlock the app
        await phone.sensor.script(.match)
        #expect(try await appLock.unlock() == .unlocked)
    }

    @Test("an enrollment change is found before any prompt, turns biometric sign-in off and asks for the password")
    func enrollmentChanged() async throws {
        _ = try await phone.signedInWithBiometrics()
        await phone.sensor.changeEnrollment()
        let session = try await phone.launch()
        let appLock = lock(session)
        #expect(try await biometricErrorCode { _ = try await appLock.unlock() } == .keyInvalidated)
        #expect(await phone.sensor.presentedPrompts.isEmpty)
        #expect(await session.state == .signedOut)
        #expect(await session.snapshot.biometricSignIn == .turnedOff(reason: .enrollmentChanged))
        #expect(await phone.keys.keyState(tag: "signin") == .absent)
    }

    @Test("an enrollment change during the prompt is caught when the key refuses to sign")
    func enrollmentChangedDuringPrompt() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session)
        let unlocking = Task { try await appLock.unlock() }
        try await waitUntil { await phone.sensor.isPromptVisible }
        await phone.sensor.changeEnrollment()
        await phone.sensor.perform(.match)
        #expect(try await biometricErrorCode { _ = try await unlocking.value } == .keyInvalidated)
        #expect(await session.snapshot.biometricSignIn == .turnedOff(reason: .enrollmentChanged))
    }

    @Test("a missing key turns biometric sign-in off")
    func missingKey() async throws {
        _ = try await phone.signedInWithBiometrics()
        try await phone.keys.deleteKey(tag: "signin")
        let session = try await phone.launch()
        #expect(try await biometricErrorCode { _ = try await lock(session).unlock() } == .keyNotFound)
        #expect(await session.snapshot.biometricSignIn == .turnedOff(reason: .keyMissing))
    }

    @Test("a yes from the authenticator without a valid key signature does not unlock (hooked evaluatePolicy)")
    func hookedAuthenticator() async throws {
        _ = try await phone.signedInWithBiometrics()
        let session = try await phone.launch()
        let appLock = lock(session, keys: ForgingKeyStore(phone.keys))
        await phone.sensor.script(.match)
        #expect(try await biometricErrorCode { _ = try await appLock.unlock() } == .keyOperationFailed)
        #expect(await session.state == .locked)
    }
}

/// A key store that answers every signing request with a signature by another key, as a tampered
/// device might.
actor ForgingKeyStore: DeviceKeyStore {
    private let inner: SoftwareDeviceKeyStore
    init(_ inner: SoftwareDeviceKeyStore) { self.inner = inner }
    func createKey(tag: String) async throws -> DevicePublicKey { try await inner.createKey(tag: tag) }
    func publicKey(tag: String) async throws -> DevicePublicKey? { try await inner.publicKey(tag: tag) }
    func keyState(tag: String) async -> DeviceKeyState { await inner.keyState(tag: tag) }
    func deleteKey(tag: String) async throws { try await inner.deleteKey(tag: tag) }
    func sign(_ message: Data, tag: String, context: AuthenticationContext) async throws -> Data {
        let otherSensor = SimulatedAuthenticator()
        let other = SoftwareDeviceKeyStore(authenticator: otherSensor)
        _ = try await other.createKey(tag: "forged")
        await otherSensor.script(.match)
        let otherContext = try await otherSensor.evaluate(BiometricPrompt(policy: .biometrics, reason: "forge"))
        return try await other.sign(message, tag: "forged", context: otherContext)
    }
}
