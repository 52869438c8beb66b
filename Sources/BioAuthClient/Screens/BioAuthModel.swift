import BioAuthCore
import Foundation
import Observation

/// What a SwiftUI app holds: the SDK as one observable object on the main actor, built synchronously (in `App.init`
/// or as a `@State` property), with the session, the sensor, the screens' texts and every action.
///
/// It makes its ``BioAuthFlows`` in the background as soon as it exists; until then ``isLoaded`` is `false` and
/// ``snapshot`` is `nil`. Actions never throw: a refusal becomes ``message`` (in the configured language, `nil` when
/// the user cancelled the prompt themselves) and ``recovery`` (what the screen should offer), and the session is read
/// again after every action. Apps that don't use SwiftUI use ``BioAuthFlows`` directly.
///
/// ```swift
/// import BioAuthApple
/// import BioAuthClient
/// import SwiftUI
/// // Partial: assumes serverURL: URL
///
/// @MainActor func makeModel() -> BioAuthModel {
///     let authenticator = LocalAuthenticator()
///     let store = KeychainSecureStore.system(service: "com.bank.app")
///     return BioAuthModel(
///         api: BioAuthAPI(serverURL: serverURL),
///         authenticator: authenticator,
///         keyStore: HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: store),
///         store: store,
///         configuration: .init(language: .simplifiedChinese)
///     )
/// }
/// ```
///
/// BioAuthApple's views take it: `BioAuthLockScreen(model:)`, `BiometricSignInButton(model:)`,
/// `BiometricSignInToggle(model:)`, and `.bioAuthLifecycle(model)` feeds it the scene's phase.
@available(iOS 17.0, macOS 14.0, *)
@MainActor
@Observable
public final class BioAuthModel {
    /// The session, once the flows are made: `nil` while ``isLoaded`` is `false`.
    public private(set) var snapshot: SessionSnapshot?
    /// What the sensor can do, read with the session.
    public private(set) var availability: BiometricAvailability?
    /// What to tell the user after the last action, in the configured language; `nil` after a success or when the user
    /// cancelled the prompt.
    public private(set) var message: String?
    /// What the screen should offer after the last refusal (sign in again, choose another PIN, contact the bank,
    /// wait); `nil` after a success.
    public private(set) var recovery: RecoveryAction?
    /// The last action's error, for an app that decides for itself; `nil` after a success.
    public private(set) var lastError: (any Error)?
    /// Whether an action is running: screens disable their buttons meanwhile.
    public private(set) var isBusy = false
    /// The flows, once made (`nil` before, or if making them failed: then ``message`` says why).
    public private(set) var flows: BioAuthFlows?
    /// The language of every text.
    public let language: Language
    /// The screens' texts and decisions in ``language``.
    public let screens: BioAuthScreens

    @ObservationIgnored private let authenticator: any BiometricAuthenticator
    @ObservationIgnored private var loading: Task<Void, Never>?

    /// Makes the model and starts making the flows over these parts (what ``BioAuthFlows/init(api:authenticator:keyStore:store:clock:configuration:isActive:)``
    /// takes). The app counts as inactive until `.bioAuthLifecycle(model)` (or ``appLock``) says otherwise.
    public init(
        api: BioAuthAPI,
        authenticator: any BiometricAuthenticator,
        keyStore: any DeviceKeyStore,
        store: any SecureStore,
        clock: any WallClock = SystemClock(),
        configuration: BioAuthFlows.Configuration = .init(),
        isActive: Bool = false
    ) {
        self.authenticator = authenticator
        self.language = configuration.language
        self.screens = BioAuthScreens(language: configuration.language)
        loading = Task { [weak self] in
            do {
                let flows = try await BioAuthFlows(
                    api: api,
                    authenticator: authenticator,
                    keyStore: keyStore,
                    store: store,
                    clock: clock,
                    configuration: configuration,
                    isActive: isActive
                )
                guard let self else { return }
                self.flows = flows
                await self.refresh()
            } catch {
                self?.show(error)
            }
        }
    }

    /// Whether the flows are made and the session read.
    public var isLoaded: Bool { snapshot != nil }

    /// The app lock, once the flows are made.
    public var appLock: AppLock? { flows?.appLock }

    /// Waits until the flows are made (or failed to be); a view's `.task` or a test awaits it.
    public func loaded() async {
        await loading?.value
    }

    // MARK: What the screens show

    /// The lock screen, while the session is locked.
    public var lockScreen: BioAuthScreens.LockScreen? { snapshot.flatMap(screens.lockScreen(for:)) }

    /// "Sign in with Face ID", while signed out on a bound device.
    public var signInButton: BioAuthScreens.SignInButton? { snapshot.flatMap(screens.signInButton(for:)) }

    /// The settings toggle for biometric sign-in.
    public var biometricToggle: BioAuthScreens.BiometricToggle? {
        guard let snapshot, let availability else { return nil }
        return screens.biometricToggle(for: snapshot, availability: availability)
    }

    /// The offer to turn biometric sign-in on ("启用面容 ID 登录？"), while the session offers it.
    public var offer: BiometricSignInOffer? {
        guard let snapshot, snapshot.state == .offeringBiometricSignIn else { return nil }
        return PromptCopy(language: language).offer(biometry: availability?.kind ?? .faceID)
    }

    // MARK: Actions

    /// Registers an account; the account, or `nil` when refused (then ``message`` says why).
    @discardableResult
    public func createAccount(username: String, password: String) async -> AccountSummary? {
        await perform { try await $0.createAccount(username: username, password: password) }
    }

    /// Password sign-in; `true` when signed in (the session may then be offering biometric sign-in: ``offer``).
    @discardableResult
    public func signIn(username: String, password: String) async -> Bool {
        await perform { _ = try await $0.signIn(username: username, password: password) } != nil
    }

    /// Sign-in with this device's key behind Face ID or Touch ID.
    @discardableResult
    public func signInWithBiometrics() async -> Bool {
        await perform { try await $0.signInWithBiometrics() } != nil
    }

    /// Sign-in with a passkey (the system's sheet; no username needed).
    @discardableResult
    public func signInWithPasskey(username: String? = nil) async -> Bool {
        await perform { _ = try await $0.signInWithPasskey(username: username) } != nil
    }

    /// 启用: a new key behind the sensor, registered with the server.
    @discardableResult
    public func enableBiometricSignIn() async -> Bool {
        await perform { try await $0.enableBiometricSignIn() } != nil
    }

    /// 稍后: not now.
    @discardableResult
    public func declineBiometricSignIn() async -> Bool {
        await perform { try await $0.declineBiometricSignIn() } != nil
    }

    /// Turns biometric sign-in off (the key is deleted and the server forgets the device).
    @discardableResult
    public func disableBiometricSignIn() async -> Bool {
        await perform { try await $0.disableBiometricSignIn() } != nil
    }

    /// What the settings toggle does when flipped.
    @discardableResult
    public func setBiometricSignIn(_ on: Bool) async -> Bool {
        on ? await enableBiometricSignIn() : await disableBiometricSignIn()
    }

    /// Unlocks the locked app with the sensor.
    @discardableResult
    public func unlock() async -> Bool {
        await perform { _ = try await $0.unlock() } != nil
    }

    /// Signs out; the binding stays, so "Sign in with Face ID" is offered next.
    @discardableResult
    public func signOut() async -> Bool {
        await perform { try await $0.signOut() } != nil
    }

    /// Pays a pending payment with the device key; the paid payment, or `nil` when refused.
    @discardableResult
    public func pay(_ paymentID: String) async -> PaymentDetails? {
        await perform { try await $0.pay(paymentID) }
    }

    /// Pays a pending payment with the payment PIN.
    @discardableResult
    public func pay(_ paymentID: String, pin: String) async -> PaymentDetails? {
        await perform { try await $0.pay(paymentID, pin: pin) }
    }

    /// The requests waiting for this customer's answer, as last read by ``loadApprovals()`` (newest first).
    public private(set) var pendingApprovals: [ApprovalDetails] = []

    /// The sheet for `approval`: who asks and what, the numbers of a sign-in, the buttons.
    public func approvalSheet(for approval: ApprovalDetails) -> BioAuthScreens.ApprovalSheet {
        screens.approvalSheet(for: approval, biometry: snapshot?.biometricSignIn.binding?.biometry ?? availability?.kind ?? .faceID)
    }

    /// Reads the pending approval requests again (after a push notification woke the app, say); false when refused.
    @discardableResult
    public func loadApprovals() async -> Bool {
        guard let pending = await perform({ try await $0.pendingApprovals() }) else { return false }
        pendingApprovals = pending
        return true
    }

    /// Opens a web page's sign-in QR code the camera read; the request to show in ``approvalSheet(for:)``, or `nil` when
    /// refused (an old or used code says so in ``message``).
    @discardableResult
    public func openScannedURL(_ url: String) async -> ApprovalDetails? {
        await perform { try await $0.openScannedURL(url) }
    }

    /// Approves `approval` with the device key (and, for a sign-in, the `number` the user tapped); the approved request,
    /// or `nil` when refused. The pending list is read again either way.
    @discardableResult
    public func approve(_ approval: ApprovalDetails, number: Int? = nil) async -> ApprovalDetails? {
        let approved = await perform { try await $0.approve(approval, number: number) }
        pendingApprovals.removeAll { $0.id == approval.id }
        return approved
    }

    /// Denies `approval` ("It wasn't me"); false when refused.
    @discardableResult
    public func deny(_ approval: ApprovalDetails) async -> Bool {
        let denied = await perform { try await $0.deny(approval.id) } != nil
        pendingApprovals.removeAll { $0.id == approval.id }
        return denied
    }

    /// Sets or changes the payment PIN with the account password; when the server asks for a step-up, one Face ID prompt
    /// ("Confirm with Face ID to change your payment PIN") answers it. A cancelled prompt is `false` with no message.
    @discardableResult
    public func setPaymentPIN(_ pin: String, currentPassword: String) async -> Bool {
        await perform { try await $0.setPaymentPIN(pin, currentPassword: currentPassword) } != nil
    }

    /// Changes the account password (a step-up first when the server asks); every session ends, so the model shows
    /// signed out, biometric sign-in still on.
    @discardableResult
    public func changePassword(current: String, new: String) async -> Bool {
        await perform { try await $0.changePassword(current: current, new: new) } != nil
    }

    /// Removes another of the account's devices (a step-up first when the server asks).
    @discardableResult
    public func revokeDevice(_ deviceID: String) async -> Bool {
        await perform { try await $0.revokeDevice(deviceID) } != nil
    }

    /// Creates a passkey for the signed-in account.
    @discardableResult
    public func createPasskey(name: String) async -> RegisteredPasskey? {
        await perform { try await $0.createPasskey(name: name) }
    }

    /// Runs `action` on the flows as the other actions do (busy meanwhile, a refusal shown, the session read again
    /// afterwards), for what the model does not wrap: the app's own calls to the bank's API with
    /// ``BioAuthFlows/accessToken()`` among them. An ``APIProblem`` it throws is reported to the flows
    /// (``BioAuthFlows/report(_:)``), so that a session or device the server says is gone shows as signed out.
    @discardableResult
    public func perform<Result: Sendable>(_ action: @escaping @Sendable (BioAuthFlows) async throws -> Result) async -> Result? {
        await loaded()
        guard let flows else { return nil }
        isBusy = true
        defer { isBusy = false }
        do {
            let result = try await action(flows)
            clearMessage()
            await refresh()
            return result
        } catch {
            if let problem = error as? APIProblem { _ = try? await flows.report(problem) }
            await refresh()
            show(error)
            return nil
        }
    }

    /// Tells the flows what the bank's API answered one of the app's own calls, made with its own networking
    /// (``BioAuthFlows/report(status:body:)``), and reads the session again: when the answer means the session or this
    /// device is gone, the app is signed out and ``message`` says so.
    ///
    /// - Returns: Whether this signed the app out.
    @discardableResult
    public func report(status: Int, body: Data) async -> Bool {
        await loaded()
        guard let flows else { return false }
        let signedOut: Bool
        do {
            signedOut = try await flows.report(status: status, body: body)
        } catch {
            await refresh()
            show(error)
            return false
        }
        await refresh()
        if signedOut { show(APIProblem(.sessionEnded, status: status, detail: "the server ended this session")) }
        return signedOut
    }

    /// Reads the session and the sensor again (after the app returns to the foreground, say).
    public func refresh() async {
        guard let flows else { return }
        let snapshot = await flows.snapshot
        let availability = await authenticator.availability(for: .biometrics)
        self.snapshot = snapshot
        self.availability = availability
    }

    /// Forgets the last refusal (the screen's message was dismissed).
    public func clearMessage() {
        message = nil
        recovery = nil
        lastError = nil
    }

    private func show(_ error: any Error) {
        let biometry = snapshot?.biometricSignIn.binding?.biometry ?? availability?.kind ?? .none
        message = screens.message(for: error, biometry: biometry, signedIn: snapshot?.state == .unlocked)
        recovery = screens.recovery(for: error)
        lastError = error
    }
}
