import Foundation

/// Which evidence beyond a password binds a device key to an account (docs/PROTOCOL.md, "Binding a device"), and the
/// cooling-off of a device bound by a password alone.
///
/// An account that has a device already binds another only when that device approves it (`bind_device`, number
/// matching) or with a binding code the bank's backend asked for: a phished password never binds a phone. The first
/// device is bound the way ``firstDevice`` says.
public struct BindingPolicy: Sendable, Equatable {
    /// How the first device of an account is bound.
    public enum FirstDevice: String, Sendable, CaseIterable {
        /// By the signed-in session (the password) alone, and then in its cooling-off.
        case password
        /// Only with a binding code the bank handed the customer (its branch, a letter, a call after its identity check).
        case bindingCode = "binding-code"
    }

    /// How the first device of an account is bound (``FirstDevice/password``).
    public var firstDevice: FirstDevice = .password
    /// How long a binding code is accepted (600 seconds, the most NIST SP 800-63B-4 §4.1.2 allows).
    public var codeLifetime: TimeInterval = 600
    /// How long a device bound by a password alone is in its cooling-off (24 hours; 0 turns it off).
    public var coolingOff: TimeInterval = 24 * 3600
    /// What a device in its cooling-off may authorize in 24 hours, in minor units of each currency (200 000: ¥2,000.00).
    public var coolingOffPaymentLimit = 200_000
    /// Binding codes tried per account per ``attemptWindow`` (5), wrong or right; a sixth waits. Counted apart from
    /// passwords: a locked code path never locks the customer's password.
    public var attemptsPerAccount = 5
    /// Binding codes tried from one client address per ``attemptWindow`` (20).
    public var attemptsPerAddress = 20
    /// The window of the two limits above (900 seconds).
    public var attemptWindow: TimeInterval = 900

    /// The defaults.
    public init() {}

    /// Checks the values; the message names the setting.
    func validate() throws {
        func fail(_ message: String) -> ConfigurationError { ConfigurationError(message: message) }
        guard (60...600).contains(codeLifetime) else { throw fail("binding code lifetime must be 60-600 seconds") }
        guard (0...30 * 86_400).contains(coolingOff) else { throw fail("cooling-off must be 0 seconds to 30 days") }
        guard coolingOffPaymentLimit >= 0 else { throw fail("cooling-off payment limit must not be negative") }
        guard attemptsPerAccount >= 1, attemptsPerAddress >= 1, attemptWindow >= 1 else {
            throw fail("binding code attempt limits must be at least 1")
        }
    }
}
