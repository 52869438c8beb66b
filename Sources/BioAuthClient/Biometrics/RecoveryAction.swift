/// What the app should offer the user after a failure.
///
/// A struct of static members so that further actions can be added without breaking callers.
public struct RecoveryAction: Hashable, Sendable, CustomStringConvertible {
    fileprivate enum Backing: String {
        case retry
        case enterPasscode
        case openSettingsToEnroll
        case openSettingsToSetPasscode
        case usePassword
        case changeInput
        case signInAgain
        case contactBank
        case tryLater
        case updateApp
        case bindThisDevice
        case none
    }

    fileprivate let backing: Backing

    /// Offer to try again (a non-match, a prompt interrupted by the system, an app that was not active).
    public static let retry = RecoveryAction(backing: .retry)
    /// Biometrics are locked out: evaluate ``AuthenticationPolicy/deviceOwner`` (the device passcode), then
    /// biometrics work again.
    public static let enterPasscode = RecoveryAction(backing: .enterPasscode)
    /// No finger or face is enrolled: send the user to Settings to set one up.
    public static let openSettingsToEnroll = RecoveryAction(backing: .openSettingsToEnroll)
    /// The device has no passcode: send the user to Settings to set one.
    public static let openSettingsToSetPasscode = RecoveryAction(backing: .openSettingsToSetPasscode)
    /// Continue with the account password (or, for a payment, the payment PIN).
    public static let usePassword = RecoveryAction(backing: .usePassword)
    /// Let the user change what they entered and send it again: another username, a longer password, another PIN, the
    /// right password, a smaller amount.
    public static let changeInput = RecoveryAction(backing: .changeInput)
    /// The session is over: show the sign-in screen.
    public static let signInAgain = RecoveryAction(backing: .signInAgain)
    /// Only the bank can help: show how to reach it (the app's own support page or number).
    public static let contactBank = RecoveryAction(backing: .contactBank)
    /// Offer to try again later: the service is busy or locked for a while (``APIProblem`` says until when, when the
    /// server said).
    public static let tryLater = RecoveryAction(backing: .tryLater)
    /// The app and the server disagree (the app is out of date, or has a defect): ask the user to update the app.
    public static let updateApp = RecoveryAction(backing: .updateApp)
    /// The account has a device already: offer to approve this one on it (``BioAuthFlows/requestDeviceBinding()``) or to
    /// enter a binding code the bank gives (``BioAuthFlows/enableBiometricSignIn(bindingCode:)``).
    public static let bindThisDevice = RecoveryAction(backing: .bindThisDevice)
    /// Nothing to offer: the user or the app chose to stop.
    public static let none = RecoveryAction(backing: .none)

    /// A stable name, e.g. `"enterPasscode"`.
    public var description: String { backing.rawValue }
}
