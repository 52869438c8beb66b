import Foundation

/// How approval requests (a sign-in or an operation started elsewhere and approved on the phone) live, and the limits
/// that keep a flood of them (push bombing, MFA fatigue) from wearing a customer down.
public struct ApprovalPolicy: Sendable, Equatable {
    /// How long a request waits for an answer when the client asks for no other expiry (120 seconds).
    public var lifetime: TimeInterval = 120
    /// The longest expiry a client may ask for with `requested_expiry` (600 seconds).
    public var maxLifetime: TimeInterval = 600
    /// Requests one customer may have waiting at once (3): a fourth is refused with `approval_limit`.
    public var maxPendingPerCustomer = 3
    /// Requests for one customer per ``window``, whoever asks (5).
    public var requestsPerCustomer = 5
    /// Requests one service client may make per ``window`` (600).
    public var requestsPerClient = 600
    /// The window of the two limits above (600 seconds).
    public var window: TimeInterval = 600
    /// Seconds a CIBA client waits between polls of the token endpoint (5, CIBA's default).
    public var pollInterval = 5

    /// The defaults.
    public init() {}

    /// Checks the values; the message names the setting.
    func validate() throws {
        func fail(_ message: String) -> ConfigurationError { ConfigurationError(message: message) }
        guard lifetime >= 10, lifetime <= maxLifetime else { throw fail("approval lifetime must be 10 seconds to the maximum lifetime") }
        guard maxLifetime <= 3600 else { throw fail("approval maximum lifetime must be at most 3600 seconds") }
        guard maxPendingPerCustomer >= 1 else { throw fail("pending approvals per customer must be at least 1") }
        guard requestsPerCustomer >= 1, requestsPerClient >= 1 else { throw fail("approval request limits must be at least 1") }
        guard window >= 1 else { throw fail("approval limit window must be at least 1 second") }
        guard (1...60).contains(pollInterval) else { throw fail("approval poll interval must be 1-60 seconds") }
    }
}
