import Foundation

/// How the server delivers webhook events: how often it looks for due deliveries, how long it waits for a receiver,
/// and how it retries.
///
/// A failed delivery is tried again after ``retryBase`` doubled for each failure so far, at most ``retryCeiling``, each
/// delay scaled by a random factor between 0.8 and 1.2 (jitter, so that a receiver coming back is not hit by every
/// instance at once), until ``retryWindow`` after the event; then it is given up (`failed`). With the defaults: about
/// 10 s, 20 s, 40 s, … 5.7 h, then every 6 h until 3 days have passed: about 22 attempts.
public struct WebhookPolicy: Sendable, Equatable {
    /// Seconds between looks for due deliveries and for pending payments that expired (1). `0` turns delivery off in
    /// this instance (another instance on the same database delivers).
    public var pollInterval: TimeInterval = 1
    /// How long a receiver has to answer one delivery (10 s).
    public var timeout: TimeInterval = 10
    /// The delay after the first failure (10 s).
    public var retryBase: TimeInterval = 10
    /// The longest delay between attempts (6 hours).
    public var retryCeiling: TimeInterval = 6 * 3600
    /// How long after the event it is still tried (3 days).
    public var retryWindow: TimeInterval = 3 * 86_400
    /// How long the previous secret still signs after a rotation (24 hours).
    public var rotationOverlap: TimeInterval = 86_400

    /// The defaults.
    public init() {}

    /// How long an instance holds a delivery it is attempting: past it, another instance may try (the first died).
    var leaseDuration: TimeInterval { timeout * 2 + 5 }

    /// The delay before attempt `failures + 1`, for a random `jitter` in 0.8...1.2.
    func delay(afterFailures failures: Int, jitter: Double) -> TimeInterval {
        let doubled = retryBase * pow(2, Double(min(max(failures - 1, 0), 40)))
        return min(doubled, retryCeiling) * jitter
    }

    /// Checks the values; the message names the setting.
    func validate() throws {
        func fail(_ message: String) -> ConfigurationError { ConfigurationError(message: message) }
        guard pollInterval >= 0, pollInterval.isFinite else { throw fail("webhook poll interval must be 0 (off) or positive") }
        guard timeout > 0, timeout <= 60 else { throw fail("webhook timeout must be more than 0 and at most 60 seconds") }
        guard retryBase > 0, retryBase.isFinite else { throw fail("webhook retry base must be positive") }
        guard retryCeiling >= retryBase, retryCeiling.isFinite else { throw fail("webhook retry ceiling must be at least the retry base") }
        guard retryWindow > 0, retryWindow.isFinite else { throw fail("webhook retry window must be positive") }
        guard rotationOverlap >= 0, rotationOverlap.isFinite else { throw fail("webhook rotation overlap must not be negative") }
    }
}
