import BioAuthCore
import Foundation

/// The one type an app uses: password sign-in and the offer to turn on biometric sign-in, enabling (key,
/// registration), biometric sign-in, the app lock, payments with the PIN fallback, turning it off, signing out.
///
/// It keeps the installation id, the tokens and the key's signature counter in the ``SecureStore``; refreshes
/// an expired access token once, transparently; and turns biometric sign-in off locally, saying why, when the
/// enrollment changed or the server revoked the device.
///
/// On a device, with BioAuthApple's backends (as `Examples/BioAuthExample` builds them):
///
/// ```swift
/// import BioAuthApple
/// import BioAuthClient
/// import UIKit
/// // Partial: assumes serverURL: URL; password: String
///
/// let authenticator = LocalAuthenticator()
/// let store = KeychainSecureStore.system(service: "com.bank.app")
/// let flows = try await BioAuthFlows(api: BioAuthAPI(serverURL: serverURL), authenticator: authenticator,
///                                    keyStore: HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: store),
///                                    store: store, configuration: .init(language: .simplifiedChinese))
/// if let offer = try await flows.signIn(username: "alice", password: password) {   // "启用面容 ID 登录？"
///     try await flows.enableBiometricSignIn()
/// }
/// let paid = try await flows.pay("3f1c…")                                           // "向 Coffee Shop 支付 ¥88.00"
/// ```
public actor BioAuthFlows {
    /// Settings of the flows.
    public struct Configuration: Sendable {
        /// The language of prompts and messages.
        public var language: Language
        /// The name the user gave this device in your app ("Alice's work iPhone"), if you ask for one; fitted to the
        /// display-name rule (emoji and odd spaces dropped). Not `UIDevice.current.name`: since iOS 16 that is "iPhone"
        /// for every customer unless Apple grants the user-assigned device name entitlement. Empty: the device is
        /// registered as its model and hardware identifier ("iPhone (iPhone15,2)", ``DeviceHardware``).
        public var deviceName: String
        /// What the device is (`UIDevice.current.model`: "iPhone", "iPad").
        public var deviceModel: String
        /// The hardware identifier (`iPhone15,2`), ``DeviceHardware/modelIdentifier(environment:)`` by default: it tells
        /// one customer's devices apart in the support console.
        public var deviceModelIdentifier: String?
        /// How long the app may stay in the background without locking.
        public var gracePeriod: TimeInterval
        /// When set, challenges for any other relying party are refused (pin it to your server's).
        public var expectedRelyingPartyID: String?
        /// The bank's web origins (`https://www.bank.example`) whose sign-in QR codes ``BioAuthFlows/openScannedURL(_:)``
        /// opens: the server's passkey origins. When empty, the `https` origins of ``expectedRelyingPartyID`` and its
        /// subdomains; when that is unset too, no code is opened.
        public var signInCodeOrigins: [String]
        /// Told what the flows do (prompts, signatures, refreshes).
        public var observer: (@Sendable (FlowEvent) -> Void)?
        /// The secure environment check: when set (and supported on this device), turning biometric sign-in on
        /// attests a new App Attest key, and every biometric sign-in and payment carries an assertion.
        public var appAttest: (any AppAttestProvider)?
        /// Passkeys: the system's passkey sheet (`BioAuthApple`'s `AuthorizationPasskeyProvider`), for "Sign in with a
        /// passkey" and "Create a passkey". Passkeys sign in only; payments keep the device key or the PIN.
        public var passkeys: (any PasskeyProvider)?

        /// Settings with the given values.
        public init(
            language: Language = .english,
            deviceName: String = "",
            deviceModel: String = "iPhone",
            deviceModelIdentifier: String? = DeviceHardware.modelIdentifier(),
            gracePeriod: TimeInterval = 30,
            expectedRelyingPartyID: String? = nil,
            signInCodeOrigins: [String] = [],
            observer: (@Sendable (FlowEvent) -> Void)? = nil,
            appAttest: (any AppAttestProvider)? = nil,
            passkeys: (any PasskeyProvider)? = nil
        ) {
            self.language = language
            self.deviceName = deviceName
            self.deviceModel = deviceModel
            self.deviceModelIdentifier = deviceModelIdentifier
            self.gracePeriod = gracePeriod
            self.expectedRelyingPartyID = expectedRelyingPartyID
            self.signInCodeOrigins = signInCodeOrigins
            self.observer = observer
            self.appAttest = appAttest
            self.passkeys = passkeys
        }

        /// Whether `url` is a sign-in code of this bank's web pages (``signInCodeOrigins``, ``SignInCodeURL``).
        func isSignInCode(_ url: String) -> Bool {
            if !signInCodeOrigins.isEmpty { return SignInCodeURL.code(in: url, origins: signInCodeOrigins) != nil }
            guard let expectedRelyingPartyID else { return false }
            return SignInCodeURL.code(in: url, relyingPartyID: expectedRelyingPartyID) != nil
        }

        /// The name registration sends (``DeviceHardware``): the user's name for the device, else its model and hardware
        /// identifier.
        var registeredDeviceName: String {
            DeviceHardware.registeredName(userName: deviceName, model: deviceModel, identifier: deviceModelIdentifier)
        }
    }

    static let installationKey = "bioauth.installation-id"
    static let tokensKey = "bioauth.tokens"
    static let counterKey = "bioauth.key-counter"
    static let appAttestKey = "bioauth.app-attest-key-id"

    /// The app lock; feed it the app's lifecycle. `nonisolated` (an `AppLock` is an actor, so `Sendable`): an app
    /// delegate or a SwiftUI view on the main actor reads it synchronously, e.g. `AppLifecycleObserver(lock: flows.appLock)`.
    nonisolated public let appLock: AppLock
    let session: SessionMachine
    let api: BioAuthAPI
    let authenticator: any BiometricAuthenticator
    let keyStore: any DeviceKeyStore
    let store: any SecureStore
    let clock: any WallClock
    let configuration: Configuration
    var receiptKeys: [DevicePublicKey]?

    /// Loads the stored state (a launch). `isActive`: whether the app is active now.
    public init(
        api: BioAuthAPI,
        authenticator: any BiometricAuthenticator,
        keyStore: any DeviceKeyStore,
        store: any SecureStore,
        clock: any WallClock = SystemClock(),
        configuration: Configuration = Configuration(),
        isActive: Bool = true
    ) async throws {
        self.api = api
        self.authenticator = authenticator
        self.keyStore = keyStore
        self.store = store
        self.clock = clock
        self.configuration = configuration
        let session = try await SessionMachine(store: store, keyStore: keyStore)
        self.session = session
        self.appLock = AppLock(
            session: session,
            authenticator: authenticator,
            keyStore: keyStore,
            clock: clock,
            configuration: .init(gracePeriod: configuration.gracePeriod, language: configuration.language),
            isActive: isActive
        )
        // Made at the first launch, so that nothing a failed request does writes to the store.
        _ = try await installationID()
    }

    /// Where the session stands.
    public var snapshot: SessionSnapshot {
        get async { await session.snapshot }
    }

    // MARK: Password sign-in and the offer

    /// Registers an account (the app's sign-up screen).
    public func createAccount(username: String, password: String) async throws -> AccountSummary {
        try await api.createAccount(username: username, password: password)
    }

    /// Forgot password: sets `newPassword` with the reset code the bank gave (``BioAuthAPI/resetPassword(username:code:newPassword:)``),
    /// then signs in with it. Every other session of the account has ended; biometric sign-in on this device, if it was
    /// on, stays on (a reset binds no device and unbinds none).
    public func resetPassword(username: String, code: String, newPassword: String) async throws -> BiometricSignInOffer? {
        try await api.resetPassword(username: username, code: code, newPassword: newPassword)
        return try await signIn(username: username, password: newPassword)
    }

    /// Password sign-in. Returns the offer to show ("Sign in with Face ID?" 启用 / 稍后) when the device can do
    /// biometrics and biometric sign-in is not on yet; `nil` otherwise.
    public func signIn(username: String, password: String) async throws -> BiometricSignInOffer? {
        try await signedIn(with: try await api.signIn(username: username, password: password, installationID: try await installationID()))
    }

    /// After a sign-in without this device's key (a password or a passkey): keeps `tokens`, and returns the offer to turn
    /// biometric sign-in on when the device can and it is off. The session machine treats all such sign-ins alike.
    func signedIn(with tokens: SessionTokens) async throws -> BiometricSignInOffer? {
        try await save(tokens)
        let availability = await authenticator.availability(for: .biometrics)
        let transition = try await session.handle(
            .passwordSignInSucceeded(accountID: tokens.accountID, canOfferBiometricSignIn: availability.isAvailable)
        )
        guard transition.to == .offeringBiometricSignIn else { return nil }
        return PromptCopy(language: configuration.language).offer(biometry: availability.kind)
    }

    /// 启用: a biometric prompt, a new key behind it, and its registration with the server. On any failure
    /// the new key is deleted and nothing changes. A device this installation bound before, whose key is gone (the Face ID
    /// enrollment changed), is revoked on the server first.
    ///
    /// The account's first device binds this way (where the bank allows it, and then in a cooling-off). On an account
    /// that has a device already the server refuses with `device_binding_required`: approve this device on that one
    /// (``requestDeviceBinding()``), or bind it with a code from the bank (``enableBiometricSignIn(bindingCode:)``).
    public func enableBiometricSignIn() async throws {
        try await register(try await prepareDeviceKey(), evidence: nil)
    }

    /// 启用 with a binding code the bank gave the customer (a branch, a letter, a call after its identity check): for an
    /// account that has a device already, or a bank that binds a first device only with a code. Case, hyphens and
    /// spaces do not matter; a wrong, used or expired code is `binding_code_invalid`, and nothing changes.
    public func enableBiometricSignIn(bindingCode: String) async throws {
        try await register(try await prepareDeviceKey(), evidence: .bindingCode(bindingCode))
    }

    /// 启用 on a new phone with one of the recovery codes the customer kept (``createRecoveryCodes()``), after a password
    /// sign-in: the lost phone's way back without the bank. The new key is bound, and at once every other device, passkey
    /// and session of the account ends. Case, hyphens and spaces do not matter; a wrong or used code is
    /// `binding_code_invalid`, and nothing changes.
    public func enableBiometricSignIn(recoveryCode: String) async throws {
        try await register(try await prepareDeviceKey(), evidence: .recoveryCode(recoveryCode))
    }

    /// A new key behind a biometric prompt, not registered yet.
    struct PreparedKey: Sendable {
        var accountID: String
        var tag: String
        var publicKey: DevicePublicKey
        var biometry: BiometryKind
        var context: AuthenticationContext
    }

    /// The prompt and the new key of a registration; checks that biometric sign-in can be turned on, and first revokes
    /// what this installation bound before (``retireStaleDevices()``).
    func prepareDeviceKey() async throws -> PreparedKey {
        let snapshot = await session.snapshot
        guard snapshot.state == .offeringBiometricSignIn || snapshot.state == .unlocked, snapshot.biometricSignIn.binding == nil,
            let account = snapshot.accountID
        else { throw SessionError(.invalidTransition, reason: "biometric sign-in can be turned on only while signed in and off") }
        try await retireStaleDevices()
        let kind: BiometryKind
        switch await authenticator.availability(for: .biometrics) {
        case .available(let available): kind = available
        case .unavailable(let error): throw error
        }
        let context = try await evaluate(.enableBiometricSignIn, biometry: kind)
        let tag = "bioauth.signin." + UUID().uuidString.lowercased()
        let publicKey = try await keyStore.createKey(tag: tag)
        return PreparedKey(accountID: account, tag: tag, publicKey: publicKey, biometry: kind, context: context)
    }

    /// Revokes this installation's live devices on the server. With biometric sign-in off here, such a device's key is
    /// gone (the Face ID enrollment changed, the key was deleted), but the server still counts it as bound, and an account
    /// with a bound device binds no other by password. A device of another installation is never touched.
    ///
    /// Revoking a device is sensitive: a session with a fresh device key may (a Face ID sign-in moments ago), a password
    /// session may not (`step_up_required`), and this key cannot step up. Then the stale device stays, and the new key
    /// binds as a second device: with a bound device's approval or the bank's binding code (``requestDeviceBinding()``,
    /// ``enableBiometricSignIn(bindingCode:)``); a new password alone never clears the way.
    private func retireStaleDevices(keeping: String? = nil) async throws {
        let installation = try await installationID()
        try await withAccessToken { token in
            for device in try await self.api.devices(accessToken: token)
            where device.revokedAt == nil && device.installationID == installation && device.id != keeping {
                do {
                    try await self.api.revokeDevice(device.id, accessToken: token)
                } catch let problem as APIProblem where problem.code == .deviceNotFound {
                    // Gone meanwhile.
                } catch let problem as APIProblem where problem.code == .stepUpRequired {
                    return
                }
            }
        }
    }

    /// Registers `prepared`'s key with `evidence`, and turns biometric sign-in on with it. On any failure the key is
    /// deleted and nothing changes.
    func register(_ prepared: PreparedKey, evidence: DeviceBindingEvidence?) async throws {
        let (account, tag, publicKey, kind, context) = (prepared.accountID, prepared.tag, prepared.publicKey, prepared.biometry, prepared.context)
        do {
            let device = try await withAccessToken { token in
                let challenge = try await self.api.registrationChallenge(accessToken: token)
                let proof = try await self.sign(.register, challenge, tag: tag, keyID: publicKey.keyID, counter: 0, context: context)
                let attestation = try await self.appAttestation(for: proof.payload)
                let device = try await self.api.registerDevice(
                    challengeID: challenge.id,
                    publicKey: publicKey,
                    biometryKind: kind,
                    deviceName: self.configuration.registeredDeviceName,
                    counter: 0,
                    signature: proof.signature,
                    appAttest: attestation,
                    evidence: evidence,
                    accessToken: token
                )
                return (device, attestation?.keyID)
            }
            try await store.set(Data("0".utf8), forKey: Self.counterKey)
            if let appAttestKeyID = device.1 {
                try await store.set(appAttestKeyID, forKey: Self.appAttestKey)
            } else {
                try await store.removeValue(forKey: Self.appAttestKey)
            }
            try await session.handle(
                .biometricSignInEnabled(
                    DeviceBinding(
                        accountID: account,
                        keyTag: tag,
                        publicKey: publicKey,
                        biometry: kind,
                        enabledAt: clock.now,
                        deviceID: device.0.id
                    )
                )
            )
            // The new key's registration stepped this session up: a stale device of this installation that a password could
            // not revoke before (an approval or a code bound this key beside it) is revoked now. Best effort: it is dead anyway.
            try? await retireStaleDevices(keeping: device.0.id)
        } catch {
            try? await keyStore.deleteKey(tag: tag)
            throw error
        }
    }

    /// 稍后: asked again after the next password sign-in.
    public func declineBiometricSignIn() async throws {
        try await session.handle(.biometricSignInDeclined)
    }

    // MARK: Biometric sign-in and the lock

    /// "Sign in with Face ID": a server challenge signed by the device key after a biometric match.
    public func signInWithBiometrics() async throws {
        let binding = try await usableBinding(signedOut: true)
        let challenge: ServerChallenge
        do {
            challenge = try await api.signInChallenge(keyID: binding.publicKey.keyID)
        } catch let problem as APIProblem {
            throw try await handleServerRefusal(problem)
        }
        let context = try await evaluate(.signIn, biometry: binding.biometry)
        let counter = try await nextCounter()
        let proof = try await sign(.login, challenge, tag: binding.keyTag, keyID: binding.publicKey.keyID, counter: counter, context: context)
        let assertion = try await appAttestAssertion(for: proof.payload)
        let tokens: SessionTokens
        do {
            tokens = try await api.signInWithBiometrics(
                challengeID: challenge.id,
                keyID: binding.publicKey.keyID,
                counter: counter,
                signature: proof.signature,
                appAttestAssertion: assertion
            )
        } catch let problem as APIProblem {
            throw try await handleServerRefusal(problem)
        }
        try await save(tokens)
        try await session.handle(.biometricSignInSucceeded)
    }

    /// Unlocks a locked app (after a relaunch or a long absence) with biometrics and the device key.
    public func unlock() async throws -> SessionState { try await appLock.unlock() }

    /// After a lockout: the device passcode turns biometrics back on.
    public func recoverFromLockout() async throws { try await appLock.recoverFromLockout() }

    // MARK: Turning it off, signing out

    /// Turns biometric sign-in off: revokes this device on the server, then deletes the key.
    public func disableBiometricSignIn() async throws {
        guard let binding = await session.snapshot.biometricSignIn.binding else {
            throw SessionError(.invalidTransition, reason: "biometric sign-in is not on")
        }
        if let deviceID = binding.deviceID, try await storedTokens() != nil {
            do {
                // From a password session, the server asks for a step-up first: the key is still here to give it.
                try await withStepUp(.revokeDevice) { token in try await self.api.revokeDevice(deviceID, accessToken: token) }
            } catch let problem as APIProblem where problem.code == .deviceNotFound {
                // Already gone on the server; turning it off locally is all that is left.
            }
        }
        try await session.handle(.biometricSignInDisabled)
        try await store.removeValue(forKey: Self.appAttestKey)
    }

    /// Signs out on the server and here. The device binding stays, so "Sign in with Face ID" is still offered.
    public func signOut() async throws {
        if let tokens = try await storedTokens() {
            do {
                try await api.signOut(accessToken: tokens.accessToken)
            } catch let problem as APIProblem where [.sessionEnded, .unauthenticated, .tokenExpired].contains(problem.code) {
                // The server has no live session to end.
            }
        }
        try await store.removeValue(forKey: Self.tokensKey)
        try await session.handle(.signedOut)
    }

    /// A valid access token for the app's own calls to the bank's API, refreshed when it expired.
    ///
    /// - Throws: ``SessionError`` (`invalidTransition`) while the app is locked: what the lock hides must not be
    ///   reachable through the bank's API either, so the app unlocks first (``unlock()``).
    public func accessToken() async throws -> String {
        guard await session.snapshot.state != .locked else {
            throw SessionError(.invalidTransition, reason: "unlock the app first: a locked app hands out no access token")
        }
        return try await withAccessToken { $0 }
    }
}
