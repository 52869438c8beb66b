import ArgumentParser
import BioAuthServer

/// How `bioauth serve` delivers webhook events (``WebhookPolicy``), and where it may send them (``OutboundPolicy``).
struct WebhookOptions: ParsableArguments {
    @Option(help: "Seconds between looks for due webhook deliveries and expired payments (default 1; 0 turns delivery off in this instance).")
    var webhookPollInterval: String?

    @Option(help: "Seconds a webhook receiver has to answer, at most 60 (default 10).")
    var webhookTimeout: String?

    @Option(help: "Seconds before the first retry of a failed delivery; it doubles after each failure (default 10).")
    var webhookRetryBase: String?

    @Option(help: "Hours a webhook event is tried before it is given up (default 72).")
    var webhookRetryWindowHours: String?

    @Option(help: "Hours the previous webhook secret still signs after a rotation (default 24).")
    var webhookRotationOverlapHours: String?

    @Option(
        name: .customLong("outbound-allow"),
        help: """
            A destination the server may deliver webhooks to although it is not public: a host name, an address or a CIDR \
            range (repeat for several; default none: only public addresses, never loopback, private or link-local ones).
            """
    )
    var outboundAllow: [String] = []

    /// The options given, by setting key (``ServerSettings``).
    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["webhookPollInterval"] = webhookPollInterval
        flags["webhookTimeout"] = webhookTimeout
        flags["webhookRetryBase"] = webhookRetryBase
        flags["webhookRetryWindowHours"] = webhookRetryWindowHours
        flags["webhookRotationOverlapHours"] = webhookRotationOverlapHours
        flags["outboundAllow"] = outboundAllow.isEmpty ? nil : outboundAllow.joined(separator: ",")
        return flags
    }
}
