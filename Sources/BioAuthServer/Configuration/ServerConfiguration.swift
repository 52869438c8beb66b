import Foundation
import Logging

/// Everything a deployment can set. The command line maps its flags and environment variables onto it.
public struct ServerConfiguration: Sendable {
    /// The address to listen on. Loopback by default.
    public var host: String = "127.0.0.1"
    /// The port to listen on.
    public var port: Int = 8080
    /// The port of the metrics listener (`GET /metrics`, Prometheus text format); nil, the default, for none. Metrics
    /// are never served on the public listener.
    public var metricsPort: Int?
    /// The address of the metrics listener. Loopback by default: a scraper elsewhere needs it opened on purpose.
    public var metricsHost: String = "127.0.0.1"
    /// The SQLite file, or `":memory:"`. Created with its tables on first start.
    public var databasePath: String = "./bioauth.sqlite"
    /// On PostgreSQL, the most connections this instance holds open for requests (its pool); the webhook dispatcher has
    /// ``PostgresDatabaseExecutor/backgroundConnections`` more of its own. PostgreSQL's `max_connections` must allow every
    /// instance's. Within ``databaseConnectionsRange``. docs/DEPLOYMENT.md says how to size it. SQLite has one.
    public var databaseConnections: Int = 16
    /// The pool sizes accepted.
    public static let databaseConnectionsRange = 1...500
    /// The least severe log level written.
    public var logLevel: Logger.Level = .info
    /// How `bioauth serve` writes log lines to standard error: `text` (the default) or `json`, one object a line.
    public var logFormat: LogFormat = .text
    /// The relying-party id every signed payload carries, e.g. `"bank.example"`.
    public var relyingPartyID: String = "bioauth.local"
    /// bcrypt's cost: 12 in production; tests use 4. Within ``bcryptCostRange``.
    public var bcryptCost: Int = 12
    /// The bcrypt costs accepted: 4 (bcrypt's least) to 16. Each step doubles the work; at 16 one password check
    /// takes seconds (≈16× cost 12), and start-up hashes once at the configured cost, so higher values would stall
    /// sign-ins and start-up for minutes to hours rather than add protection a bank could use.
    public static let bcryptCostRange = 4...16
    /// Threads that hash passwords, apart from the event loops and the database's thread. The default, half the
    /// cores (at least one), keeps bcrypt at production cost from taking every core from biometric requests.
    public var passwordHashingThreads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
    /// Consecutive wrong passwords that lock an account.
    public var maxFailedPasswordAttempts: Int = 5
    /// How long a locked account stays locked.
    public var accountLockDuration: TimeInterval = 15 * 60
    /// Lifetime of an access token.
    public var accessTokenLifetime: TimeInterval = 15 * 60
    /// Lifetime of a service token (`POST /oauth/token`): 300 seconds; a backend asks for a new one when it runs out.
    public var serviceTokenLifetime: TimeInterval = 300
    /// Seconds a graceful shutdown (SIGTERM, SIGINT) waits for requests in flight before it cancels them (30).
    public var shutdownTimeout: TimeInterval = 30
    /// Seconds between SIGTERM (or SIGINT) and closing the listener, during which `GET /readyz` answers 503 and every
    /// other request is served as usual, so that a load balancer takes this instance out of rotation before it stops
    /// accepting connections (0, the default: close at once; 5-10 behind Kubernetes). At most 300.
    public var shutdownDrain: TimeInterval = 0
    /// Lifetime of a refresh token.
    public var refreshTokenLifetime: TimeInterval = 30 * 24 * 3600
    /// Lifetime of a biometric sign-in challenge.
    public var loginChallengeLifetime: TimeInterval = 120
    /// Lifetime of a device registration challenge.
    public var registrationChallengeLifetime: TimeInterval = 300
    /// The PEM file of the server's receipt-signing key (P-256), created with owner-only permissions on
    /// first start and never overwritten; `":memory:"` for a key that lives as long as the process (tests).
    public var receiptKeyPath: String = "./bioauth-receipt-key.pem"
    /// The file of the key that seals payment PIN hashes (AES-256-GCM; a pepper kept outside the database, so a
    /// leaked database alone does not let anyone search the million PINs offline). Created with owner-only
    /// permissions on first start and never overwritten; every instance sharing a database needs the same file.
    /// `":memory:"` for a key that lives as long as the process (tests).
    public var pinKeyPath: String = "./bioauth-pin-key"
    /// How long a payment stays pending before it expires (at most 5 minutes).
    public var paymentLifetime: TimeInterval = 300
    /// Failed authorizations (wrong signature, transaction or PIN) that lock a payment.
    public var maxFailedPaymentAttempts: Int = 5
    /// Consecutive wrong PINs that lock PIN payments.
    public var maxFailedPINAttempts: Int = 5
    /// How long PIN payments stay locked.
    public var pinLockDuration: TimeInterval = 30 * 60
    /// The largest request body accepted, in bytes.
    public var maxRequestBodySize: Int = 64 * 1024
    /// Biometric sign-in challenges one key may get from one client address per ``rateLimitWindow`` (the endpoint
    /// needs no session). Counted per address so that requests from elsewhere cannot use up the owner's share.
    public var signInChallengesPerWindow: Int = 20
    /// Biometric sign-in challenges one client address may get per ``rateLimitWindow``, whatever the keys: bounds
    /// what one address can make the server store. An IPv6 client counts by its /64 prefix.
    public var signInChallengesPerClient: Int = 60
    /// Service tokens (`grant_type=client_credentials`) one service client may ask for per ``rateLimitWindow`` (60): a
    /// backend needs one every few minutes. Counted per client, so the clients behind one address (a bank's NAT) do not
    /// share it, and a backend polling for its CIBA requests is never counted here.
    public var serviceTokenRequestsPerClient: Int = 60
    /// Failed client authentications (an unknown, wrong, missing or malformed id or secret) one client address may make
    /// per ``rateLimitWindow`` (20) at `POST /oauth/token` and `POST /bc-authorize`: once reached, the address is refused
    /// before its credentials are checked, so secrets cannot be tried; requests with the right credentials never count.
    public var clientAuthenticationFailuresPerAddress: Int = 20
    /// Addresses of reverse proxies in front of the server whose `X-Forwarded-For` names the client. Empty by
    /// default: then the connection's peer is the client, and the header is ignored (anyone could forge it).
    public var trustedProxies: [String] = []
    /// The window of the rate limits.
    public var rateLimitWindow: TimeInterval = 60
    /// The secure environment check (App Attest): off by default.
    public var appAttest = AppAttestPolicy()
    /// What is purged when, by the background job and `bioauth admin purge`.
    public var retention = RetentionPolicy()
    /// How webhook events are delivered and retried.
    public var webhooks = WebhookPolicy()
    /// Where the server's own requests (webhook deliveries) may go: public destinations, and those listed as allowed.
    public var outbound = OutboundPolicy()
    /// Whether the operator console is served under `/console` (off by default).
    public var consoleEnabled = false
    /// The console's own listener: with a port set, `/console` is served there only (and is 404 on the API's listener),
    /// so it can stay on the bank's internal network. Nil (the default): on the API's listener.
    public var consolePort: Int?
    /// The console listener's address (`127.0.0.1`).
    public var consoleHost: String = "127.0.0.1"
    /// How long a console session lasts without a request (15 minutes; 1 minute to 8 hours).
    public var consoleIdleTimeout: TimeInterval = 15 * 60
    /// How long a console session lasts after sign-in, however busy (8 hours; at least the idle timeout, at most 7 days).
    public var consoleSessionLifetime: TimeInterval = 8 * 3600
    /// The issuer an operator's authenticator app shows beside their name (`BioAuth`): give staging and production
    /// different ones, so that their codes are told apart. 1-32 of `A-Z a-z 0-9`, space, `.`, `-` and `_`.
    public var consoleTOTPIssuer = "BioAuth"
    /// The time zone the console shows times and the overview's hours in: an IANA name such as `Asia/Shanghai` (`UTC`).
    public var consoleTimeZone = "UTC"
    /// Passkeys: origins, relying party, attestation, and the web sign-in page (off by default).
    public var passkeys = PasskeyPolicy()
    /// Approval requests (CIBA): their lifetime and the limits against push bombing.
    public var approvals = ApprovalPolicy()
    /// Which evidence beyond a password binds a device, and the cooling-off of one bound by a password alone.
    public var binding = BindingPolicy()
    /// How long a step-up (a fresh device-key signature in a session, docs/PROTOCOL.md "Step-up") raises the session's
    /// assurance before it drops back to the level of its sign-in (300 seconds; 30 seconds to 1 hour).
    public var stepUpLifetime: TimeInterval = 300

    /// The defaults: loopback, `./bioauth.sqlite`, production bcrypt cost.
    public init() {}

    /// Checks the values before anything starts.
    public func validate() throws {
        func fail(_ message: String) -> ConfigurationError { ConfigurationError(message: message) }
        guard (0...65535).contains(port) else { throw fail("port must be 0-65535") }
        guard !host.isEmpty else { throw fail("host must not be empty") }
        if let consolePort {
            guard (0...65535).contains(consolePort) else { throw fail("console port must be 0-65535") }
            guard consolePort == 0 || (consolePort != port && consolePort != metricsPort) else {
                throw fail("console port must differ from the port and the metrics port")
            }
            guard !consoleHost.isEmpty else { throw fail("console host must not be empty") }
        }
        if let metricsPort {
            guard (0...65535).contains(metricsPort) else { throw fail("metrics port must be 0-65535") }
            guard metricsPort == 0 || metricsPort != port else { throw fail("metrics port must differ from the port") }
            guard !metricsHost.isEmpty else { throw fail("metrics host must not be empty") }
        }
        guard !databasePath.isEmpty else { throw fail("database path must not be empty") }
        guard Self.databaseConnectionsRange.contains(databaseConnections) else {
            throw fail(
                "database connections must be \(Self.databaseConnectionsRange.lowerBound)-\(Self.databaseConnectionsRange.upperBound), not \(databaseConnections)"
            )
        }
        guard (1...255).contains(relyingPartyID.utf8.count) else { throw fail("relying-party id must be 1-255 bytes") }
        guard Self.bcryptCostRange.contains(bcryptCost) else {
            throw fail("bcrypt cost must be \(Self.bcryptCostRange.lowerBound)-\(Self.bcryptCostRange.upperBound), not \(bcryptCost)")
        }
        guard passwordHashingThreads >= 1 else { throw fail("password hashing threads must be at least 1") }
        guard maxFailedPasswordAttempts >= 1 else { throw fail("max failed password attempts must be at least 1") }
        for (name, value) in [
            ("account lock duration", accountLockDuration), ("access token lifetime", accessTokenLifetime),
            ("refresh token lifetime", refreshTokenLifetime), ("login challenge lifetime", loginChallengeLifetime),
            ("registration challenge lifetime", registrationChallengeLifetime), ("payment lifetime", paymentLifetime),
            ("PIN lock duration", pinLockDuration), ("shutdown timeout", shutdownTimeout), ("service token lifetime", serviceTokenLifetime),
        ] where !(value > 0) {
            throw fail("\(name) must be positive")
        }
        guard (0...300).contains(shutdownDrain) else { throw fail("shutdown drain must be 0-300 seconds") }
        guard (60...8 * 3600).contains(consoleIdleTimeout) else { throw fail("console idle timeout must be 60 seconds to 8 hours") }
        guard consoleSessionLifetime >= consoleIdleTimeout, consoleSessionLifetime <= 7 * 86_400 else {
            throw fail("console session lifetime must be at least the console idle timeout and at most 7 days")
        }
        guard (1...32).contains(consoleTOTPIssuer.utf8.count),
            consoleTOTPIssuer.utf8.allSatisfy({ ServiceClients.nameBytes.contains($0) || $0 == 0x20 }),
            consoleTOTPIssuer.first != " ", consoleTOTPIssuer.last != " "
        else {
            throw fail("console TOTP issuer must be 1-32 characters of A-Z a-z 0-9, space, . - _ (no colon)")
        }
        guard TimeZone(identifier: consoleTimeZone) != nil else {
            throw fail("console time zone must be an IANA time zone name such as Asia/Shanghai or UTC, not \(consoleTimeZone)")
        }
        guard paymentLifetime <= 300 else { throw fail("payment lifetime must be at most 300 seconds") }
        guard maxFailedPaymentAttempts >= 1, maxFailedPINAttempts >= 1 else { throw fail("attempt limits must be at least 1") }
        guard !receiptKeyPath.isEmpty else { throw fail("receipt key path must not be empty") }
        guard !pinKeyPath.isEmpty else { throw fail("PIN key path must not be empty") }
        guard signInChallengesPerWindow >= 1, signInChallengesPerClient >= 1, serviceTokenRequestsPerClient >= 1,
            clientAuthenticationFailuresPerAddress >= 1, rateLimitWindow > 0
        else {
            throw fail("rate limits must be positive")
        }
        for proxy in trustedProxies where ClientAddress.key(proxy[...]) == nil {
            throw fail("trusted proxy \(proxy) is not an IP address")
        }
        guard maxRequestBodySize >= 1024 else { throw fail("max request body size must be at least 1024 bytes") }
        try retention.validate()
        try webhooks.validate()
        try outbound.validate()
        var passkeys = self.passkeys
        passkeys.applyDefaultOrigin(port: port)
        try passkeys.validate()
        try approvals.validate()
        try binding.validate()
        guard (30...3600).contains(stepUpLifetime) else { throw fail("step-up lifetime must be 30-3600 seconds") }
        if appAttest.mode != .off {
            guard !appAttest.allowedAppIDs.isEmpty else { throw fail("App Attest needs at least one app id (TEAMID.bundle.id)") }
            for appID in appAttest.allowedAppIDs {
                let parts = appID.split(separator: ".", maxSplits: 1)
                guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
                    throw fail("App Attest app id \(appID) is not TEAMID.bundle.id (a 10-character team id)")
                }
            }
            guard !appAttest.environments.isEmpty else { throw fail("App Attest needs at least one environment") }
            guard !appAttest.trustedRoots.isEmpty else { throw fail("App Attest needs at least one trusted root") }
        }
    }
}

/// A configuration value is out of range.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    public var description: String { message }
}

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// One human-readable line each (swift-log's stream handler).
    case text
    /// One JSON object a line (``JSONLogHandler``), for log collectors.
    case json

    /// A logger labelled `label` writing to standard error in this format, every line carrying the current request's id
    /// and trace (``Logging/Logger/MetadataProvider/bioAuthRequest``), at `level` and above.
    public func logger(label: String, level: Logger.Level) -> Logger {
        var logger = Logger(label: label) { label in
            switch self {
            case .text: StreamLogHandler.standardError(label: label, metadataProvider: .bioAuthRequest)
            case .json: JSONLogHandler(label: label, metadataProvider: .bioAuthRequest)
            }
        }
        logger.logLevel = level
        return logger
    }
}

extension ServerConfiguration {
    /// A configuration for tests on one machine: the database `database` (in memory unless given), receipt and PIN keys
    /// made in memory, bcrypt at its lowest cost (4, so tests do not wait for it), relying party `bank.example`, any
    /// free port, webhook deliveries allowed to loopback (where test receivers listen), and names resolved by a
    /// ``StaticHostResolver`` that knows only `localhost` (tests never wait on the machine's DNS), and no cooling-off for a
    /// device bound by a password (tests bind a phone and use it at once; those of the cooling-off turn it on). Never for
    /// production: nothing it signs outlives the process.
    public static func forTests(database: String = ":memory:") -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.databasePath = database
        configuration.receiptKeyPath = ":memory:"
        configuration.pinKeyPath = ":memory:"
        configuration.bcryptCost = 4
        configuration.relyingPartyID = "bank.example"
        configuration.port = 0
        configuration.outbound.allowed = ["127.0.0.1", "::1", "localhost"]
        configuration.outbound.resolver = StaticHostResolver()
        configuration.binding.coolingOff = 0
        return configuration
    }
}
