internal import AppleDeviceSimulation
// LocalAuthentication as the iOS 18 SDK declares it to Swift, for the parts BioAuth uses; a scripted fake behind it
// (AppleDeviceSimulation). Declarations from developer.apple.com/documentation/localauthentication: LAContext
// (canEvaluatePolicy(_:error:), evaluatePolicy(_:localizedReason:reply:) and its async form, invalidate(),
// localizedFallbackTitle, localizedCancelTitle, localizedReason, interactionNotAllowed, biometryType,
// evaluatedPolicyDomainState (deprecated in iOS 18), domainState (iOS 18)), LADomainState, LADomainStateBiometry,
// LAPolicy, LABiometryType, LAError and LAErrorDomain. LAContext is an Objective-C class that is not Sendable.
import Foundation

/// Linux shim: Foundation declares `NSErrorPointer` only where Objective-C exists (there it is an
/// `AutoreleasingUnsafeMutablePointer`); callers write `&error` the same way.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

/// The error domain of LocalAuthentication's errors.
public let LAErrorDomain: String = "com.apple.LocalAuthentication"

/// Authentication policies.
@available(iOS 8.0, macOS 10.10, *)
public enum LAPolicy: Int, @unchecked Sendable {
    case deviceOwnerAuthenticationWithBiometrics = 1
    case deviceOwnerAuthentication = 2
}

/// The type of biometric authentication the device supports.
@available(iOS 11.0, macOS 10.13.2, *)
public enum LABiometryType: Int, @unchecked Sendable {
    case none = 0
    case touchID = 1
    case faceID = 2
    @available(iOS 17.0, macOS 14.0, visionOS 1.0, *)
    case opticID = 4
}

/// LocalAuthentication's error codes.
public struct LAError: Error, Hashable, @unchecked Sendable {
    public enum Code: Int, @unchecked Sendable {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case appCancel = -9
        case invalidContext = -10
        case biometryNotPaired = -12
        case biometryDisconnected = -13
        case invalidDimensions = -14
        case notInteractive = -1004
    }
    public let code: Code
    public init(_ code: Code) { self.code = code }
}

/// The state of the biometric domain (iOS 18).
@available(iOS 18.0, macOS 15.0, *)
open class LADomainStateBiometry: NSObject {
    private let stateHashValue: Data?
    private let type: LABiometryType
    init(hash: Data?, type: LABiometryType) {
        self.stateHashValue = hash
        self.type = type
    }
    /// Changes when a face or finger is added or removed; `nil` when nothing is enrolled.
    open var stateHash: Data? { stateHashValue }
    open var biometryType: LABiometryType { type }
}

/// The authentication domain state (iOS 18).
@available(iOS 18.0, macOS 15.0, *)
open class LADomainState: NSObject {
    private let biometryState: LADomainStateBiometry
    init(_ biometry: LADomainStateBiometry) { biometryState = biometry }
    open var biometry: LADomainStateBiometry { biometryState }
}

/// A mechanism for evaluating authentication policies and access controls.
@available(iOS 8.0, macOS 10.10, *)
open class LAContext: NSObject {
    private var checkedBiometry: LABiometryType = .none
    private var invalidated = false
    private var evaluatedState: Data?

    public override init() { super.init() }

    /// The fallback button's title; `""` hides the button.
    open var localizedFallbackTitle: String?
    /// The cancel button's title.
    open var localizedCancelTitle: String?
    /// The reason shown when a keychain item or key that uses this context asks for authentication.
    open var localizedReason: String = ""
    /// Whether the context may not show authentication UI: operations that would need it fail instead.
    open var interactionNotAllowed: Bool = false

    /// The device's biometry. `.none` until `canEvaluatePolicy(_:error:)` has been called (as Apple documents).
    @available(iOS 11.0, macOS 10.13.2, *)
    open var biometryType: LABiometryType { checkedBiometry }

    /// Preflights `policy`; on failure `error` receives an `LAErrorDomain` error.
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        let device = SimulatedDevice.current
        checkedBiometry = LABiometryType(rawValue: device.biometry.rawValue) ?? .none
        if invalidated {
            error?.pointee = NSError(domain: LAErrorDomain, code: LAError.Code.invalidContext.rawValue)
            return false
        }
        if let code = device.preflight(policy: policy.rawValue) {
            error?.pointee = NSError(domain: LAErrorDomain, code: code)
            return false
        }
        evaluatedState = device.enrollmentHash
        return true
    }

    /// Evaluates `policy`, calling `reply` on a private queue.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        let outcome = run(policy, localizedReason)
        DispatchQueue.global().async { reply(outcome == nil, outcome) }
    }

    /// Evaluates `policy`; throws an `LAErrorDomain` error when it fails.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        if let error = run(policy, localizedReason) { throw error }
        return true
    }

    private func run(_ policy: LAPolicy, _ reason: String) -> NSError? {
        // iOS raises an Objective-C exception (the app crashes) for an empty reason.
        precondition(!reason.isEmpty, "LAContext.evaluatePolicy: localizedReason must not be empty")
        guard !invalidated else { return NSError(domain: LAErrorDomain, code: LAError.Code.invalidContext.rawValue) }
        let device = SimulatedDevice.current
        checkedBiometry = LABiometryType(rawValue: device.biometry.rawValue) ?? .none
        let prompt = SimulatedDevice.Prompt(reason: reason, fallbackTitle: localizedFallbackTitle, cancelTitle: localizedCancelTitle)
        if let code = device.evaluate(policy: policy.rawValue, prompt: prompt, interactionNotAllowed: interactionNotAllowed) {
            return NSError(domain: LAErrorDomain, code: code)
        }
        evaluatedState = device.enrollmentHash
        SimulatedDevice.current.markEvaluated(self)
        return nil
    }

    /// Ends the context: a running evaluation ends with `appCancel`, later ones fail with `invalidContext`.
    open func invalidate() { invalidated = true }

    /// The biometric domain state after a successful evaluation or preflight.
    @available(iOS, introduced: 9.0, deprecated: 18.0, message: "Use domainState.biometry.stateHash")
    @available(macOS, introduced: 10.11, deprecated: 15.0, message: "Use domainState.biometry.stateHash")
    open var evaluatedPolicyDomainState: Data? { evaluatedState }

    /// The authentication domain state.
    @available(iOS 18.0, macOS 15.0, *)
    open var domainState: LADomainState {
        LADomainState(LADomainStateBiometry(hash: SimulatedDevice.current.enrollmentHash, type: checkedBiometry))
    }
}
