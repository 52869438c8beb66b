import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

@Suite("Session state machine")
struct SessionMachineTests {
    // First sign-in table:
    // | step                                  | loginState | startAutoLoginState | isAppCurrentLoginState |
    // | before sign-in                        | nil or NO  | nil or NO           | NO                     |
    // | password sign-in succeeded            | YES        | nil or NO           | YES                    |
    // | user enabled biometric sign-in (启用) | YES        | YES                 | YES                    |
    // | user declined (稍后)                  | YES        | NO                  | YES                    |
    @Test("first sign-in: the flags of the table, step by step")
    func firstSignIn() async throws {
        let phone = TestPhone()
        let session = try await phone.launch()
        #expect(await flags(session) == "nil | nil | NO")
        #expect(await session.state == .signedOut)
        #expect(await !session.snapshot.canSignInWithBiometrics)

        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        #expect(await flags(session) == "YES | nil | YES")
        #expect(await session.state == .offeringBiometricSignIn)

        try await session.handle(.biometricSignInEnabled(try await phone.makeBinding()))
        #expect(await flags(session) == "YES | YES | YES")
        #expect(await session.state == .unlocked)
        #expect(await session.snapshot.canSignInWithBiometrics)
    }

    @Test("first sign-in: 稍后 records NO and keeps the user signed in")
    func declined() async throws {
        let session = try await TestPhone().launch()
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        try await session.handle(.biometricSignInDeclined)
        #expect(await flags(session) == "YES | NO | YES")
        #expect(await session.state == .unlocked)
        #expect(await session.snapshot.biometricSignIn == .declined)
    }

    @Test("a device that can't do biometrics is not offered; the next password sign-in offers again after 稍后")
    func offerRules() async throws {
        let session = try await TestPhone().launch()
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: false))
        #expect(await session.state == .unlocked)
        #expect(await flags(session) == "YES | nil | YES")
        try await session.handle(.signedOut)
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        try await session.handle(.biometricSignInDeclined)
        try await session.handle(.signedOut)
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        #expect(await session.state == .offeringBiometricSignIn)
        #expect(await flags(session) == "YES | NO | YES")
    }

    // Relaunch table:
    // | step                   | loginState | startAutoLoginState | isAppCurrentLoginState |
    // | before verification    | YES        | YES                 | NO                     |
    // | verification failed    | NO         | YES                 | NO                     |
    // | verification succeeded | YES        | YES                 | YES                    |
    @Test("relaunch: locked, then verification succeeded")
    func relaunchSucceeded() async throws {
        let phone = TestPhone()
        _ = try await phone.signedInWithBiometrics()
        let relaunched = try await phone.launch()
        #expect(await flags(relaunched) == "YES | YES | NO")
        #expect(await relaunched.state == .locked)
        try await relaunched.handle(.biometricVerificationSucceeded)
        #expect(await flags(relaunched) == "YES | YES | YES")
        #expect(await relaunched.state == .unlocked)
    }

    @Test("relaunch: verification failed means a password sign-in, with biometric sign-in still offered")
    func relaunchFailed() async throws {
        let phone = TestPhone()
        _ = try await phone.signedInWithBiometrics()
        let relaunched = try await phone.launch()
        try await relaunched.handle(.biometricVerificationFailed)
        #expect(await flags(relaunched) == "NO | YES | NO")
        #expect(await relaunched.state == .signedOut)
        #expect(await relaunched.snapshot.canSignInWithBiometrics)
        // And it stays so across another launch.
        #expect(await flags(try await phone.launch()) == "NO | YES | NO")
    }

    @Test("relaunch without biometric sign-in asks for the password")
    func relaunchWithoutBiometrics() async throws {
        let phone = TestPhone()
        let session = try await phone.launch()
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        try await session.handle(.biometricSignInDeclined)
        let relaunched = try await phone.launch()
        #expect(await relaunched.state == .signedOut)
        #expect(await flags(relaunched) == "NO | NO | NO")
        #expect(await !relaunched.snapshot.canSignInWithBiometrics)
    }

    @Test("sign-out keeps the device binding, so biometric sign-in is still offered")
    func signOutKeepsBinding() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.signedOut)
        #expect(await flags(session) == "NO | YES | NO")
        #expect(await session.snapshot.canSignInWithBiometrics)
        #expect(await phone.keys.keyState(tag: "signin") == .valid)
        try await session.handle(.biometricSignInSucceeded)
        #expect(await session.state == .unlocked)
        #expect(await session.snapshot.accountID == "alice")
    }

    @Test("session expired: like a sign-out, the binding stays")
    func sessionExpired() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.sessionExpired)
        #expect(await session.state == .signedOut)
        #expect(await session.snapshot.canSignInWithBiometrics)
    }

    @Test("enrollment changed: biometric sign-in turns off, the key is deleted, a locked app needs the password")
    func enrollmentChanged() async throws {
        let phone = TestPhone()
        _ = try await phone.signedInWithBiometrics()
        let relaunched = try await phone.launch()
        let transition = try await relaunched.handle(.enrollmentChanged)
        #expect(transition.effects == [.deleteDeviceKey(tag: "signin")])
        #expect(transition.to == .signedOut)
        #expect(await relaunched.snapshot.biometricSignIn == .turnedOff(reason: .enrollmentChanged))
        #expect(await flags(relaunched) == "NO | NO | NO")
        #expect(await phone.keys.keyState(tag: "signin") == .absent)
        // Sign in with the password; the offer to re-enable comes back.
        try await relaunched.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        #expect(await relaunched.state == .offeringBiometricSignIn)
        try await relaunched.handle(.biometricSignInEnabled(try await phone.makeBinding(tag: "signin-2")))
        #expect(await flags(relaunched) == "YES | YES | YES")
    }

    @Test("enrollment changed while in use: the app stays unlocked, biometric sign-in is off")
    func enrollmentChangedWhileUnlocked() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.enrollmentChanged)
        #expect(await session.state == .unlocked)
        #expect(await flags(session) == "YES | NO | YES")
    }

    @Test("device revoked by the server: signed out, biometric sign-in off with the reason, key deleted")
    func deviceRevoked() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.deviceRevoked)
        #expect(await session.state == .signedOut)
        #expect(await session.snapshot.biometricSignIn == .turnedOff(reason: .deviceRevoked))
        #expect(await !session.snapshot.canSignInWithBiometrics)
        #expect(await phone.keys.keyState(tag: "signin") == .absent)
        await #expect(throws: SessionError.self) { try await session.handle(.biometricSignInSucceeded) }
    }

    @Test("secure environment now required: biometric sign-in off with the reason, key deleted, the session kept")
    func secureEnvironmentRequired() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.secureEnvironmentRequired)
        #expect(await session.state == .unlocked)
        #expect(await session.snapshot.biometricSignIn == .turnedOff(reason: .secureEnvironmentRequired))
        #expect(await phone.keys.keyState(tag: "signin") == .absent)
        #expect(await flags(session) == "YES | NO | YES")
    }

    @Test("biometric sign-in disabled by the user: key deleted, still signed in")
    func disabled() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.biometricSignInDisabled)
        #expect(await session.state == .unlocked)
        #expect(await flags(session) == "YES | NO | YES")
        #expect(await phone.keys.keyState(tag: "signin") == .absent)
        #expect(try await phone.launch().state == .signedOut)
    }

    @Test("another account's password sign-in unbinds the previous account's key")
    func accountChanged() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics(account: "alice")
        try await session.handle(.signedOut)
        let transition = try await session.handle(.passwordSignInSucceeded(accountID: "bob", canOfferBiometricSignIn: true))
        #expect(transition.effects == [.deleteDeviceKey(tag: "signin")])
        #expect(await session.snapshot.biometricSignIn == .turnedOff(reason: .accountChanged))
        #expect(await session.state == .offeringBiometricSignIn)
        await #expect(throws: SessionError.self) {
            try await session.handle(.biometricSignInEnabled(try await phone.makeBinding(account: "alice", tag: "other")))
        }
    }

    @Test(
        "events that make no sense are refused and change nothing",
        arguments: [
            SessionEvent.biometricVerificationSucceeded, .biometricVerificationFailed, .biometricSignInSucceeded,
            .biometricSignInDeclined, .biometricSignInDisabled,
        ]
    )
    func refusedWhenSignedOut(event: SessionEvent) async throws {
        let phone = TestPhone()
        let session = try await phone.launch()
        let before = await session.snapshot
        do {
            try await session.handle(event)
            Issue.record("accepted \(event) while signed out")
        } catch let error as SessionError {
            #expect(error.code == .invalidTransition)
        }
        #expect(await session.snapshot == before)
        #expect(await phone.store.keys.isEmpty)
    }

    @Test("an unlocked app can't be 'unlocked' again, and enabling twice is refused")
    func refusedWhenUnlocked() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        await #expect(throws: SessionError.self) { try await session.handle(.biometricVerificationSucceeded) }
        await #expect(throws: SessionError.self) { try await session.handle(.biometricSignInEnabled(try await phone.makeBinding(tag: "again"))) }
        #expect(await flags(session) == "YES | YES | YES")
    }

    @Test("app lock: only with biometric sign-in on")
    func appLockedEvent() async throws {
        let phone = TestPhone()
        let session = try await phone.signedInWithBiometrics()
        try await session.handle(.appLocked)
        #expect(await session.state == .locked)
        let other = try await TestPhone().launch()
        try await other.handle(.passwordSignInSucceeded(accountID: "bob", canOfferBiometricSignIn: false))
        try await other.handle(.appLocked)
        #expect(await other.state == .unlocked)
    }

    @Test("a store that fails to write leaves the machine as it was")
    func failingStore() async throws {
        let store = FailingStore()
        let session = try await SessionMachine(store: store, keyStore: TestPhone().keys)
        await store.setFailing(true)
        await #expect(throws: SecureStoreError.self) {
            try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        }
        #expect(await session.state == .signedOut)
        await store.setFailing(false)
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        #expect(await session.state == .offeringBiometricSignIn)
    }

    @Test("a key whose deletion failed is deleted at a later event")
    func retriedDeletion() async throws {
        let phone = TestPhone()
        let flaky = FlakyDeletionKeyStore(phone.keys)
        let session = try await SessionMachine(store: phone.store, keyStore: flaky)
        try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
        try await session.handle(.biometricSignInEnabled(try await phone.makeBinding()))
        await flaky.setFailing(true)
        try await session.handle(.biometricSignInDisabled)
        #expect(await phone.keys.keyState(tag: "signin") == .valid)
        await flaky.setFailing(false)
        try await session.handle(.appLocked)
        #expect(await phone.keys.keyState(tag: "signin") == .absent)
    }

    @Test("unreadable stored state is reported, and can be discarded")
    func corruptState() async throws {
        let phone = TestPhone()
        try await phone.store.set(Data("{not json".utf8), forKey: SessionMachine.defaultStorageKey)
        do {
            _ = try await phone.launch()
            Issue.record("loaded corrupt state")
        } catch let error as SessionError {
            #expect(error.code == .corruptState)
        }
        try await SessionMachine.discardStoredState(in: phone.store)
        #expect(try await phone.launch().state == .signedOut)
    }

    @Test("the persisted record holds no in-memory state and no private key")
    func persistedRecord() async throws {
        let phone = TestPhone()
        _ = try await phone.signedInWithBiometrics()
        let data = try #require(try await phone.store.data(forKey: SessionMachine.defaultStorageKey))
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("unlocked") && !text.contains("offering"))
        #expect(text.contains("\"signedIn\":true"))
    }
}

actor FailingStore: SecureStore {
    private var failing = false
    private let inner = InMemorySecureStore()
    func setFailing(_ value: Bool) { failing = value }
    func data(forKey key: String) async throws -> Data? { try await inner.data(forKey: key) }
    func set(_ data: Data, forKey key: String) async throws {
        if failing { throw SecureStoreError(.ioFailure, reason: "disk full") }
        try await inner.set(data, forKey: key)
    }
    func removeValue(forKey key: String) async throws { try await inner.removeValue(forKey: key) }
    func containsValue(forKey key: String) async throws -> Bool { try await inner.containsValue(forKey: key) }
}

actor FlakyDeletionKeyStore: DeviceKeyStore {
    private let inner: SoftwareDeviceKeyStore
    private var failing = false
    init(_ inner: SoftwareDeviceKeyStore) { self.inner = inner }
    func setFailing(_ value: Bool) { failing = value }
    func createKey(tag: String) async throws -> DevicePublicKey { try await inner.createKey(tag: tag) }
    func publicKey(tag: String) async throws -> DevicePublicKey? { try await inner.publicKey(tag: tag) }
    func keyState(tag: String) async -> DeviceKeyState { await inner.keyState(tag: tag) }
    func sign(_ message: Data, tag: String, context: AuthenticationContext) async throws -> Data {
        try await inner.sign(message, tag: tag, context: context)
    }
    func deleteKey(tag: String) async throws {
        if failing { throw BiometricError(.keyOperationFailed, reason: "keychain busy") }
        try await inner.deleteKey(tag: tag)
    }
}
