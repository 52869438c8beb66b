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
    /// Nothing to offer: the user or the app chose to stop.
    public static let none = RecoveryAction(backing: .none)

    /// A stable name, e.g. `"enterPasscode"`.
    public var description: String { backing.rawValue }
}
