import BioAuthClient
import BioAuthCore
import Foundation

/// A biometric sensor and passcode that behave like a device and the iOS Simulator's Face ID / Touch ID
/// menu ("Enrolled", "Matching Face", "Non-matching Face").
///
/// - Availability follows the device: no sensor → -6, no passcode → -5, nothing enrolled → -7, locked out → -8.
/// - A prompt waits for the user: script outcomes ahead with ``script(_:)`` or answer a visible prompt with
///   ``perform(_:)``.
/// - 3 non-matches end one prompt with -1; 5 consecutive failures lock biometrics (-8) until a passcode
///   evaluation (`AuthenticationPolicy.deviceOwner` answered with ``Outcome/passcode``) succeeds.
/// - Evaluating while the app is inactive fails with -1004; the app going inactive ends a visible prompt
///   with -4.
/// - ``changeEnrollment()`` changes the domain state, which invalidates ``SoftwareDeviceKeyStore`` keys.
/// - Cancelling the evaluating task ends the prompt with -9, like `LAContext.invalidate()`.
public actor SimulatedAuthenticator: BiometricAuthenticator {
    /// What the simulated user does at a prompt.
    public enum Outcome: String, Codable, Hashable, Sendable, CaseIterable {
        /// Presents a matching finger or face.
        case match
        /// Presents a non-matching finger or face.
        case nonMatch
        /// Taps Cancel.
        case cancel
        /// Taps the fallback button. Ignored when the prompt hides it (empty fallback title).
        case fallback
        /// The system ends the prompt (a call comes in).
        case systemCancel
        /// Enters the correct device passcode. Only a device-owner prompt has a passcode field.
        case passcode
        /// The prompt never calls back (as Face ID can after repeated failures); only cancelling ends it.
        case neverAnswers
    }

    /// Everything the simulated device remembers, for simulators that outlive a process (`bioauth device`).
    public struct State: Codable, Sendable {
        var kind: String
        var enrolled: Bool
        var passcodeSet: Bool
        var enrollment: Data
        var consecutiveFailures: Int
        var lockedOut: Bool
        var queued: [Outcome]
    }

    /// The device's set-up.
    public struct Configuration: Sendable {
        /// The sensor; `BiometryKind.none` for a device without one.
        public var kind: BiometryKind
        /// Whether a finger or face is enrolled.
        public var enrolled: Bool
        /// Whether the device has a passcode.
        public var passcodeSet: Bool
        /// Whether the app is active.
        public var appActive: Bool
        /// Non-matches one prompt allows before it ends with -1.
        public var attemptsPerPrompt: Int
        /// Consecutive failures that lock biometrics out.
        public var lockoutThreshold: Int

        /// A device with the given set-up; by default an enrolled Face ID phone with a passcode, app active.
        public init(
            kind: BiometryKind = .faceID,
            enrolled: Bool = true,
            passcodeSet: Bool = true,
            appActive: Bool = true,
            attemptsPerPrompt: Int = 3,
            lockoutThreshold: Int = 5
        ) {
            self.kind = kind
            self.enrolled = enrolled
            self.passcodeSet = passcodeSet
            self.appActive = appActive
            self.attemptsPerPrompt = attemptsPerPrompt
            self.lockoutThreshold = lockoutThreshold
        }
    }

    private var configuration: Configuration
    private let clock: any WallClock
    /// The enrollment the device has now; changes with every enrollment change.
    private(set) var enrollment: Data
    /// Consecutive failed biometric attempts across prompts.
    public private(set) var consecutiveFailures = 0
    /// Whether biometrics are locked out.
    public private(set) var isLockedOut = false
    /// Every prompt shown, oldest first.
    public private(set) var presentedPrompts: [BiometricPrompt] = []
    /// Told of each prompt the moment it shows (``onPresent(_:)``).
    private var presentObserver: (@Sendable (BiometricPrompt) -> Void)?

    /// Calls `observer` with each prompt the moment it shows, before the user answers it: a demo or a test can say what
    /// the user sees in the order it happens. Replaces any earlier observer.
    public func onPresent(_ observer: @escaping @Sendable (BiometricPrompt) -> Void) { presentObserver = observer }

    private var queued: [Outcome] = []
    private var visiblePrompt: UUID?
    private var waiting: CheckedContinuation<Outcome?, Never>?
    private var cancelledPrompts: Set<UUID> = []
    private var unusedContexts: [UUID: AuthenticationContext] = [:]

    /// A device with `configuration`; `clock` stamps the contexts it issues.
    public init(_ configuration: Configuration = Configuration(), clock: any WallClock = SystemClock()) {
        self.configuration = configuration
        self.clock = clock
        self.enrollment = Self.newEnrollment()
    }

    /// A device restored from `state` (made by ``state``); the app starts active.
    public init(restoring state: State, clock: any WallClock = SystemClock()) {
        self.configuration = Configuration(
            kind: BiometryKind(rawValue: state.kind) ?? .faceID,
            enrolled: state.enrolled,
            passcodeSet: state.passcodeSet
        )
        self.clock = clock
        self.enrollment = state.enrollment
        self.consecutiveFailures = state.consecutiveFailures
        self.isLockedOut = state.lockedOut
        self.queued = state.queued
    }

    /// What the device remembers now: sensor, enrollment, failures, lockout and the outcomes not used yet.
    public var state: State {
        State(
            kind: configuration.kind.rawValue,
            enrolled: configuration.enrolled,
            passcodeSet: configuration.passcodeSet,
            enrollment: enrollment,
            consecutiveFailures: consecutiveFailures,
            lockedOut: isLockedOut,
            queued: queued
        )
    }

    /// The outcomes scripted and not used yet.
    public var queuedOutcomes: [Outcome] { queued }

    /// The sensor's kind.
    public var kind: BiometryKind { configuration.kind }

    // MARK: The Simulator's menu

    /// Outcomes for the next prompts, used in order before waiting for ``perform(_:)``.
    public func script(_ outcomes: Outcome...) { queued.append(contentsOf: outcomes) }

    /// The user acts now: answers the visible prompt, or is queued for the next one.
    public func perform(_ outcome: Outcome) {
        if let waiting {
            self.waiting = nil
            waiting.resume(returning: outcome)
        } else {
            queued.append(outcome)
        }
    }

    /// Whether a prompt is on screen.
    public var isPromptVisible: Bool { visiblePrompt != nil }

    /// Whether a visible prompt waits for the user's next touch (a prompt allows several tries).
    public var isWaitingForUser: Bool { waiting != nil }

    /// The app becomes active or inactive. Going inactive ends a visible prompt with -4.
    public func setAppActive(_ active: Bool) {
        configuration.appActive = active
        if !active, let waiting {
            self.waiting = nil
            waiting.resume(returning: .systemCancel)
        }
    }

    /// Enrolls or removes all fingers or faces. Either way the domain state changes.
    public func setEnrolled(_ enrolled: Bool) {
        configuration.enrolled = enrolled
        enrollment = Self.newEnrollment()
    }

    /// Sets or removes the device passcode. Removing it also removes every enrollment, as iOS does.
    public func setPasscodeSet(_ set: Bool) {
        configuration.passcodeSet = set
        if !set { setEnrolled(false) }
    }

    /// Adds another finger or face: the domain state changes and device keys made before are invalidated.
    public func changeEnrollment() { enrollment = Self.newEnrollment() }

    // MARK: BiometricAuthenticator

    /// Whether `policy` can be evaluated on the simulated device now, and why not.
    public func availability(for policy: AuthenticationPolicy) -> BiometricAvailability {
        if policy == .deviceOwner {
            return configuration.passcodeSet ? .available(configuration.kind) : .unavailable(BiometricError(laErrorCode: -5))
        }
        guard configuration.kind.isBiometric else { return .unavailable(BiometricError(laErrorCode: -6)) }
        guard configuration.passcodeSet else { return .unavailable(BiometricError(laErrorCode: -5)) }
        guard configuration.enrolled else { return .unavailable(BiometricError(laErrorCode: -7)) }
        guard !isLockedOut else { return .unavailable(BiometricError(laErrorCode: -8)) }
        return .available(configuration.kind)
    }

    /// The current enrollment fingerprint, or `nil` when biometrics are unavailable.
    public func currentDomainState() -> Data? {
        availability(for: .biometrics).isAvailable ? enrollment : nil
    }

    /// Shows `prompt` and plays the next scripted outcome.
    public func evaluate(_ prompt: BiometricPrompt) async throws -> AuthenticationContext {
        guard !prompt.reason.isEmpty else { throw BiometricError(.invalidPrompt, reason: "empty reason") }
        guard configuration.appActive else { throw BiometricError(laErrorCode: -1004) }
        if case .unavailable(let error) = availability(for: prompt.policy) { throw error }
        guard visiblePrompt == nil else {
            throw BiometricError(laErrorCode: -4)  // one prompt at a time
        }
        let id = UUID()
        visiblePrompt = id
        presentedPrompts.append(prompt)
        presentObserver?(prompt)
        defer {
            visiblePrompt = nil
            cancelledPrompts.remove(id)
        }
        return try await withTaskCancellationHandler {
            try await run(prompt, id: id)
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    /// Lets ``SoftwareDeviceKeyStore`` check that `context` is an unused, successful biometric evaluation of
    /// this authenticator under the current enrollment, and uses it up.
    func consume(_ context: AuthenticationContext) -> Bool {
        guard let issued = unusedContexts.removeValue(forKey: context.id) else { return false }
        return issued.policy == .biometrics && issued.domainState == enrollment
    }

    // MARK: Internals

    private func run(_ prompt: BiometricPrompt, id: UUID) async throws -> AuthenticationContext {
        var attempts = 0
        var hanging = false
        while true {
            guard let outcome = await nextOutcome(for: id) else { throw BiometricError(laErrorCode: -9) }
            if hanging { continue }
            switch outcome {
            case .match:
                if prompt.policy == .deviceOwner && (isLockedOut || !configuration.enrolled) { continue }
                consecutiveFailures = 0
                return issueContext(policy: prompt.policy, kind: configuration.kind)
            case .nonMatch:
                if prompt.policy == .deviceOwner && (isLockedOut || !configuration.enrolled) { continue }
                consecutiveFailures += 1
                attempts += 1
                if consecutiveFailures >= configuration.lockoutThreshold {
                    isLockedOut = true
                    if prompt.policy == .biometrics { throw BiometricError(laErrorCode: -8) }
                } else if attempts >= configuration.attemptsPerPrompt && prompt.policy == .biometrics {
                    throw BiometricError(laErrorCode: -1)
                }
            case .passcode:
                guard prompt.policy == .deviceOwner else { continue }
                consecutiveFailures = 0
                isLockedOut = false
                return issueContext(policy: .deviceOwner, kind: .none)
            case .fallback:
                if prompt.policy == .biometrics && prompt.showsFallbackButton { throw BiometricError(laErrorCode: -3) }
            case .cancel:
                throw BiometricError(laErrorCode: -2)
            case .systemCancel:
                throw BiometricError(laErrorCode: -4)
            case .neverAnswers:
                hanging = true
            }
        }
    }

    private func nextOutcome(for id: UUID) async -> Outcome? {
        if cancelledPrompts.contains(id) || Task.isCancelled { return nil }
        if !queued.isEmpty { return queued.removeFirst() }
        return await withCheckedContinuation { continuation in waiting = continuation }
    }

    private func cancel(_ id: UUID) {
        guard visiblePrompt == id else { return }
        cancelledPrompts.insert(id)
        if let waiting {
            self.waiting = nil
            waiting.resume(returning: nil)
        }
    }

    private func issueContext(policy: AuthenticationPolicy, kind: BiometryKind) -> AuthenticationContext {
        let context = AuthenticationContext(
            policy: policy,
            biometryKind: kind,
            domainState: enrollment,
            evaluatedAt: clock.now
        )
        unusedContexts[context.id] = context
        return context
    }

    private static func newEnrollment() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
