/// What an evaluation accepts: biometrics only, or the device owner (biometrics or the device passcode).
///
/// Mirrors `LAPolicy.deviceOwnerAuthenticationWithBiometrics` and `.deviceOwnerAuthentication`. A struct of
/// static members so that further policies (a paired watch, a companion device) can be added later.
public struct AuthenticationPolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: String {
        case biometrics
        case deviceOwner
    }

    private let backing: Backing

    /// Biometrics only. The only policy whose context may unlock a device key.
    public static let biometrics = AuthenticationPolicy(backing: .biometrics)
    /// Biometrics or the device passcode. Used to recover from a biometric lockout.
    public static let deviceOwner = AuthenticationPolicy(backing: .deviceOwner)

    private init(backing: Backing) { self.backing = backing }

    /// `"biometrics"` or `"deviceOwner"`.
    public var description: String { backing.rawValue }
}
