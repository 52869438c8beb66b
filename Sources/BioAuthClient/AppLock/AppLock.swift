import BioAuthCore
import Foundation

/// Locks the app when it comes back after the grace period and unlocks it with the device key.
///
/// Feed it the app's lifecycle (`BioAuthApple` does this from UIKit notifications or SwiftUI's
/// `scenePhase`). It never shows a prompt while the app is not active: ``unlock()`` waits for
/// ``didBecomeActive()`` instead of failing with -1004, and concurrent ``unlock()`` calls share one prompt.
///
/// Unlocking is not a yes/no from the authenticator: the device key signs a fresh nonce with the evaluated
/// context and the signature is verified against the bound public key, so a hooked `evaluatePolicy`
/// unlocks nothing.
public actor AppLock {
    /// Settings of the lock.
    public struct Configuration: Sendable {
        /// How long the app may stay in the background without locking. 30 seconds by default.
        public var gracePeriod: TimeInterval
        /// The language of the prompts.
        public var language: Language

        /// Settings with the given values.
        public init(gracePeriod: TimeInterval = 30, language: Language = .english) {
            self.gracePeriod = gracePeriod
            self.language = language
        }
    }

    private let session: SessionMachine
    private let authenticator: any BiometricAuthenticator
    private let keyStore: any DeviceKeyStore
    private let clock: any WallClock
    private let configuration: Configuration

    /// Whether the app is active (in the foreground and interactive).
    public private(set) var isActive: Bool
    private var backgroundedAt: Date?
    private var activeWaiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
    private var unlockInFlight: Task<SessionState, any Error>?

    /// A lock over `session`. `isActive`: whether the app is active now; at launch it usually is not yet.
    public init(
        session: SessionMachine,
        authenticator: any BiometricAuthenticator,
        keyStore: any DeviceKeyStore,
        clock: any WallClock = SystemClock(),
        configuration: Configuration = Configuration(),
        isActive: Bool = false
    ) {
        self.session = session
        self.authenticator = authenticator
        self.keyStore = keyStore
        self.clock = clock
        self.configuration = configuration
        self.isActive = isActive
    }

    // MARK: Lifecycle

    /// The app became active: prompts may be shown; waiting ``unlock()`` calls go on.
    public func didBecomeActive() {
        isActive = true
        let waiters = activeWaiters
        activeWaiters = [:]
        for waiter in waiters.values { waiter.resume() }
    }

    /// The app is about to stop being active (an incoming call, the app switcher).
    public func willResignActive() { isActive = false }

    /// The app went to the background: the grace period starts.
    public func didEnterBackground() {
        isActive = false
        backgroundedAt = clock.now
    }

    /// The app is coming back. Locks it when it was away longer than the grace period, or when the clock
    /// went backwards meanwhile (a changed device clock must not extend the grace period).
    @discardableResult
    public func willEnterForeground() async throws -> SessionState {
        defer { backgroundedAt = nil }
        if let backgroundedAt {
            let away = clock.now.timeIntervalSince(backgroundedAt)
            if away > configuration.gracePeriod || away < 0 {
                try await session.handle(.appLocked)
            }
        }
        return await session.state
    }

    // MARK: Unlocking

    /// Unlocks a locked app with biometrics and the device key.
    ///
    /// Waits until the app is active. When the app is not locked, returns the state without a prompt.
    /// Tapping "Use Password" ends the session (``SessionState/signedOut``); an enrollment change or a lost
    /// key turns biometric sign-in off and throws ``BiometricError/Code-swift.struct/keyInvalidated`` or
    /// ``BiometricError/Code-swift.struct/keyNotFound``; a lockout throws
    /// ``BiometricError/Code-swift.struct/biometryLockout`` (then ``recoverFromLockout()``); the app stays
    /// locked after every other failure.
    ///
    /// - Returns: the state afterwards, ``SessionState/unlocked`` on success.
    public func unlock() async throws -> SessionState {
        if let unlockInFlight { return try await unlockInFlight.value }
        let task = Task { try await self.performUnlock() }
        unlockInFlight = task
        defer { unlockInFlight = nil }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// After a lockout: asks for the device passcode, which turns biometrics back on. Call ``unlock()``
    /// afterwards. Waits until the app is active.
    public func recoverFromLockout() async throws {
        try await waitUntilActive()
        let kind = await session.snapshot.biometricSignIn.binding?.biometry ?? .none
        let prompt = PromptCopy(language: configuration.language).prompt(for: .recoverFromLockout, biometry: kind)
        _ = try await authenticator.evaluate(prompt)
    }

    private func performUnlock() async throws -> SessionState {
        let snapshot = await session.snapshot
        guard snapshot.state == .locked, let binding = snapshot.biometricSignIn.binding else {
            return snapshot.state
        }
        try await session.requireUsableKey(binding, in: keyStore)
        try await waitUntilActive()

        let prompt = PromptCopy(language: configuration.language).prompt(for: .unlockApp, biometry: binding.biometry)
        let nonce = Self.unlockNonce()
        let signature: Data
        do {
            let context = try await authenticator.evaluate(prompt)
            signature = try await keyStore.sign(nonce, tag: binding.keyTag, context: context)
        } catch let error as BiometricError {
            switch error.code {
            case .userFallback: try await session.handle(.biometricVerificationFailed)
            case .keyInvalidated: try await session.handle(.enrollmentChanged)
            case .keyNotFound: try await session.handle(.deviceKeyMissing)
            default: break
            }
            throw error
        }
        guard binding.publicKey.isValidSignature(signature, for: nonce) else {
            throw BiometricError(.keyOperationFailed, reason: "the unlock signature does not verify with the bound key")
        }
        return try await session.handle(.biometricVerificationSucceeded).to
    }

    /// A fresh, domain-separated message for the device key to sign.
    private static func unlockNonce() -> Data {
        var generator = SystemRandomNumberGenerator()
        var nonce = Data("bioauth.app-unlock.v1:".utf8)
        for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { nonce.append(contentsOf: $0) } }
        return nonce
    }

    private func waitUntilActive() async throws {
        if isActive { return }
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: BiometricError(.appCancel, reason: "cancelled while waiting for the app to become active"))
                } else {
                    activeWaiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: UUID) {
        activeWaiters.removeValue(forKey: id)?.resume(
            throwing: BiometricError(.appCancel, reason: "cancelled while waiting for the app to become active")
        )
    }
}
