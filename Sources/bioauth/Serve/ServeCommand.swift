import ArgumentParser
import BioAuthServer
import Foundation
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Runs the BioAuth server.",
        discussion: """
            Every setting can also come from the environment (BIOAUTH_ and the option's name in upper snake case: \
            --signin-challenge-limit is BIOAUTH_SIGNIN_CHALLENGE_LIMIT) or from a JSON config file (--config or \
            BIOAUTH_CONFIG; keys in camel case: {"signinChallengeLimit": 20}). An option on the command line wins \
            over the environment, which wins over the file. --print-config shows the result and where each value \
            came from. The database and the receipt key are created on first start.
            """
    )

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: String?

    @Option(
        help:
            "The SQLite database file (created 0600), :memory:, or a PostgreSQL URL: postgres://user:password@host:5432/bioauth?sslmode=require (default ./bioauth.sqlite; docs/DEPLOYMENT.md)."
    )
    var database: String?

    @Option(
        help:
            "On PostgreSQL, the most database connections this instance opens for requests (default 16; webhook deliveries have 2 more; docs/DEPLOYMENT.md sizes it)."
    )
    var databaseConnections: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Option(help: "text, or json for one JSON object a line (default text). Logs go to standard error.")
    var logFormat: String?

    @Option(help: "Serve GET /metrics (Prometheus text format) on this port, apart from the API (default: no metrics listener).")
    var metricsPort: String?

    @Option(help: "The address of the metrics listener (default 127.0.0.1).")
    var metricsHost: String?

    @Option(name: .customLong("rp-id"), help: "The relying-party id signed payloads carry (default bioauth.local).")
    var relyingPartyID: String?

    @Option(help: "bcrypt cost, 4-16 (default 12).")
    var bcryptCost: String?

    @Option(help: "The receipt-signing key's PEM file, created (0600) if missing (default ./bioauth-receipt-key.pem).")
    var receiptKey: String?

    @Option(
        help:
            "The key file that seals payment PIN hashes (a pepper outside the database) and webhook signing secrets, created (0600) if missing (default ./bioauth-pin-key)."
    )
    var pinKey: String?

    @Option(
        name: .customLong("signin-challenge-limit"),
        help: "Biometric sign-in challenges one key may get per minute (default 20; raise it only for load tests)."
    )
    var signInChallengeLimit: String?

    @Option(
        name: .customLong("signin-client-limit"),
        help: "Biometric sign-in challenges one client address may get per minute, whatever the keys (default 60)."
    )
    var signInClientLimit: String?

    @Option(
        name: .customLong("trusted-proxy"),
        help: "A reverse proxy's IP address whose X-Forwarded-For names the client (repeat for several; default none)."
    )
    var trustedProxies: [String] = []

    @Option(help: "Seconds a graceful shutdown (SIGTERM, SIGINT) waits for requests in flight before cancelling them (default 30).")
    var shutdownTimeout: String?

    @Option(
        help:
            "Seconds after SIGTERM (or SIGINT) during which /readyz answers 503 and requests are still served, before the listener closes (default 0; 5-10 behind a load balancer)."
    )
    var shutdownDrain: String?

    @Option(help: "Seconds an access token lives (default 900).")
    var accessTokenLifetime: String?

    @Option(help: "Seconds a refresh token lives (default 2592000, 30 days).")
    var refreshTokenLifetime: String?

    @Option(help: "Seconds a biometric sign-in challenge, and a challenge to set the payment PIN with a biometric, lives (default 120).")
    var loginChallengeLifetime: String?

    @Option(help: "Seconds a device registration challenge lives (default 300).")
    var registrationChallengeLifetime: String?

    @Option(help: "Seconds a payment stays pending before it expires, at most 300 (default 300).")
    var paymentLifetime: String?

    @Option(help: "Seconds an approval request (CIBA) waits for the customer's answer when the client asks for no other expiry (default 120).")
    var approvalLifetime: String?

    @Option(help: "Approval requests one customer may have waiting at once (default 3).")
    var approvalMaxPending: String?

    @Option(help: "Approval requests for one customer per 10 minutes, refused ones counted (default 5).")
    var approvalRequestsPerCustomer: String?

    @Option(help: "How an account's first device binds: password (then in its cooling-off) or binding-code (default password).")
    var firstDeviceBinding: String?

    @Option(help: "Seconds a binding code from the bank's backend is accepted, 60-600 (default 600).")
    var bindingCodeLifetime: String?

    @Option(help: "Seconds a device bound by a password alone is in its cooling-off; 0 turns it off (default 86400).")
    var coolingOff: String?

    @Option(help: "What a device in its cooling-off may pay in 24 hours, in minor units of each currency (default 200000).")
    var coolingOffPaymentLimit: String?

    @Option(help: "Seconds a step-up (a fresh Face ID in a session) counts for sensitive actions before it drops back (default 300).")
    var stepUpLifetime: String?

    @Option(name: .customLong("app-attest"), help: "The secure environment check: off, report or require (default off).")
    var appAttest: String?

    @Option(name: .customLong("app-attest-app-id"), help: "An app id App Attest accepts, TEAMID.bundle.id (repeat for several).")
    var appAttestAppIDs: [String] = []

    @Option(name: .customLong("app-attest-environment"), help: "production, development or both (default production).")
    var appAttestEnvironment: String?

    @Option(help: "Seconds between purges of what has aged out (default 3600; 0 turns the background job off).")
    var retentionInterval: String?

    @Option(help: "Seconds a service token (POST /oauth/token) lives (default 300).")
    var serviceTokenLifetime: String?

    @Option(help: "Seconds a locked account stays locked (default 900).")
    var accountLockDuration: String?

    @Option(help: "Consecutive wrong passwords that lock an account (default 5).")
    var maxFailedPasswordAttempts: String?

    @Option(help: "Failed authorizations that lock a payment (default 5).")
    var maxFailedPaymentAttempts: String?

    @Option(name: .customLong("max-failed-pin-attempts"), help: "Consecutive wrong PINs that lock PIN payments (default 5).")
    var maxFailedPINAttempts: String?

    @Option(name: .customLong("pin-lock-duration"), help: "Seconds PIN payments stay locked (default 1800).")
    var pinLockDuration: String?

    @Option(help: "Service tokens (client_credentials) one service client may ask for per rate-limit window (default 60).")
    var serviceTokenRequestLimit: String?

    @Option(
        help:
            "Failed client authentications (wrong, unknown or missing id or secret) one client address may make per rate-limit window at POST /oauth/token and /bc-authorize (default 20); right credentials never count."
    )
    var clientAuthFailureLimit: String?

    @Option(help: "Seconds in a rate-limit window (default 60).")
    var rateLimitWindow: String?

    @Option(help: "The largest request body accepted, in bytes, at least 1024 (default 65536).")
    var maxRequestBodySize: String?

    @Option(help: "Threads that hash passwords (default half the cores, at least 1).")
    var passwordHashingThreads: String?

    @Option(help: "A JSON file of settings (keys as in --print-config), below the environment and the options.")
    var config: String?

    @Flag(help: "Print the effective configuration (secrets redacted) and where each value came from, then exit.")
    var printConfig = false

    @OptionGroup var retention: RetentionOptions

    @OptionGroup var webhooks: WebhookOptions

    @OptionGroup var passkeys: PasskeyOptions

    @Flag(help: "Serve the operator console under /console (operators: bioauth admin operator create).")
    var console = false

    @Option(help: "Serve the console on a listener of its own at this port (and not on the API's); default: on the API's listener.")
    var consolePort: String?

    @Option(help: "The console listener's address (default 127.0.0.1; keep it on the bank's internal network).")
    var consoleHost: String?

    @Option(help: "Seconds a console session lasts without a request, 60 to 28800 (default 900).")
    var consoleIdleTimeout: String?

    @Option(help: "Seconds a console session lasts after sign-in however busy, at least the idle timeout, at most 604800 (default 28800).")
    var consoleSessionLifetime: String?

    @Option(
        name: .customLong("console-totp-issuer"),
        help: "The issuer operators' authenticator apps show (default BioAuth; differ per environment)."
    )
    var consoleTOTPIssuer: String?

    @Option(help: "The time zone the console shows times in, an IANA name such as Asia/Shanghai (default UTC).")
    var consoleTimeZone: String?

    @Flag(
        name: .customLong("app-attest-allow-pin"),
        help: "Under --app-attest require, still allow PIN payments, which carry no App Attest proof (default: refused)."
    )
    var appAttestAllowPIN = false

    /// The `BIOAUTH_*` variables under which `bioauth serve` runs with `configuration`'s database (and pool size), receipt key,
    /// bcrypt cost, relying party, sign-in challenge limits, log level, retention interval and batches (the batch size only
    /// when set), and allowed outbound destinations (what `bioauth bench --server-process` sets);
    /// ``serverConfiguration(environment:)`` reads them back.
    static func environment(for configuration: ServerConfiguration) -> [String: String] {
        var environment = [
            "BIOAUTH_DATABASE": configuration.databasePath, "BIOAUTH_RECEIPT_KEY": configuration.receiptKeyPath,
            "BIOAUTH_DATABASE_CONNECTIONS": String(configuration.databaseConnections),
            "BIOAUTH_PIN_KEY": configuration.pinKeyPath,
            "BIOAUTH_BCRYPT_COST": String(configuration.bcryptCost), "BIOAUTH_RP_ID": configuration.relyingPartyID,
            "BIOAUTH_SIGNIN_CHALLENGE_LIMIT": String(configuration.signInChallengesPerWindow),
            "BIOAUTH_SIGNIN_CLIENT_LIMIT": String(configuration.signInChallengesPerClient),
            "BIOAUTH_LOG_LEVEL": configuration.logLevel.rawValue,
            "BIOAUTH_RETENTION_INTERVAL": String(configuration.retention.interval),
            "BIOAUTH_RETENTION_BATCH_REST": String(configuration.retention.batchRest),
        ]
        if let size = configuration.retention.batchSize { environment["BIOAUTH_RETENTION_BATCH_SIZE"] = String(size) }
        if !configuration.outbound.allowed.isEmpty { environment["BIOAUTH_OUTBOUND_ALLOW"] = configuration.outbound.allowed.joined(separator: ",") }
        return environment
    }

    /// The options given on the command line, by setting key (``ServerSettings``).
    var flags: [String: String] {
        var flags: [String: String] = [:]
        let given: [(String, String?)] = [
            ("host", host), ("port", port), ("database", database), ("databaseConnections", databaseConnections),
            ("logLevel", logLevel), ("logFormat", logFormat),
            ("metricsPort", metricsPort), ("metricsHost", metricsHost), ("rpId", relyingPartyID), ("bcryptCost", bcryptCost),
            ("passwordHashingThreads", passwordHashingThreads), ("receiptKey", receiptKey), ("pinKey", pinKey),
            ("accessTokenLifetime", accessTokenLifetime), ("refreshTokenLifetime", refreshTokenLifetime),
            ("loginChallengeLifetime", loginChallengeLifetime), ("registrationChallengeLifetime", registrationChallengeLifetime),
            ("paymentLifetime", paymentLifetime), ("serviceTokenLifetime", serviceTokenLifetime),
            ("maxFailedPasswordAttempts", maxFailedPasswordAttempts),
            ("accountLockDuration", accountLockDuration), ("maxFailedPaymentAttempts", maxFailedPaymentAttempts),
            ("maxFailedPinAttempts", maxFailedPINAttempts), ("pinLockDuration", pinLockDuration),
            ("signinChallengeLimit", signInChallengeLimit), ("signinClientLimit", signInClientLimit),
            ("serviceTokenRequestLimit", serviceTokenRequestLimit), ("clientAuthFailureLimit", clientAuthFailureLimit),
            ("rateLimitWindow", rateLimitWindow),
            ("trustedProxies", trustedProxies.isEmpty ? nil : trustedProxies.joined(separator: ",")),
            ("maxRequestBodySize", maxRequestBodySize), ("shutdownTimeout", shutdownTimeout), ("shutdownDrain", shutdownDrain),
            ("retentionInterval", retentionInterval),
            ("appAttest", appAttest), ("appAttestAppIds", appAttestAppIDs.isEmpty ? nil : appAttestAppIDs.joined(separator: ",")),
            ("appAttestEnvironment", appAttestEnvironment), ("appAttestAllowPin", appAttestAllowPIN ? "true" : nil),
            ("console", console ? "true" : nil),
            ("consolePort", consolePort),
            ("consoleHost", consoleHost),
            ("consoleIdleTimeout", consoleIdleTimeout),
            ("consoleSessionLifetime", consoleSessionLifetime),
            ("consoleTotpIssuer", consoleTOTPIssuer),
            ("consoleTimeZone", consoleTimeZone),
            ("approvalLifetime", approvalLifetime), ("approvalMaxPending", approvalMaxPending),
            ("approvalRequestsPerCustomer", approvalRequestsPerCustomer),
            ("firstDeviceBinding", firstDeviceBinding), ("bindingCodeLifetime", bindingCodeLifetime), ("coolingOff", coolingOff),
            ("coolingOffPaymentLimit", coolingOffPaymentLimit), ("stepUpLifetime", stepUpLifetime),
        ]
        for (key, value) in given { flags[key] = value }
        return flags.merging(retention.flags) { $1 }.merging(webhooks.flags) { $1 }.merging(passkeys.flags) { $1 }
    }

    /// The configuration from the options, then the environment, then the config file, then the defaults.
    func serverConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ServerConfiguration {
        try ServerSettings.resolve(flags: flags, configFile: config, environment: environment).configuration
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (configuration, sources) = try ServerSettings.resolve(flags: flags, configFile: config, environment: environment)
        let misspelled = ServerSettings.misspelledEnvironment(environment)
        if printConfig {
            print(ServerSettings.describe(configuration, sources: sources))
            for warning in misspelled { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
            return
        }
        let logger = configuration.logFormat.logger(label: "bioauth", level: configuration.logLevel)
        for warning in misspelled { logger.warning("\(warning)") }
        logger.info(
            "BioAuth starting on \(configuration.host):\(configuration.port), database \(redactedDatabaseLocation(configuration.databasePath))"
        )
        if let metricsPort = configuration.metricsPort {
            logger.info("metrics at http://\(configuration.metricsHost):\(metricsPort)/metrics")
        }
        // Until SIGTERM or SIGINT, then a graceful shutdown within the shutdown timeout; exit 0.
        try await BioAuthServerApplication.run(configuration: configuration, logger: logger)
        logger.info("BioAuth stopped")
    }
}
