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
            Every option can also be set with an environment variable (BIOAUTH_HOST, BIOAUTH_PORT, \
            BIOAUTH_DATABASE, BIOAUTH_LOG_LEVEL, BIOAUTH_LOG_FORMAT, BIOAUTH_METRICS_PORT, BIOAUTH_METRICS_HOST, BIOAUTH_RETENTION_INTERVAL, \
            BIOAUTH_TOKEN_RETENTION_DAYS, BIOAUTH_AUDIT_RETENTION_DAYS, BIOAUTH_IDEMPOTENCY_KEY_RETENTION_HOURS, BIOAUTH_RP_ID, BIOAUTH_BCRYPT_COST, BIOAUTH_RECEIPT_KEY, \
            BIOAUTH_SIGNIN_CHALLENGE_LIMIT, BIOAUTH_APP_ATTEST, BIOAUTH_APP_ATTEST_APP_IDS, \
            BIOAUTH_APP_ATTEST_ENVIRONMENT); an \
            option given on the command line wins. The database and the receipt key are created on first start.
            """
    )

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: Int?

    @Option(help: "The SQLite database file, or :memory: (default ./bioauth.sqlite).")
    var database: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Option(help: "text, or json for one JSON object a line (default text). Logs go to standard error.")
    var logFormat: String?

    @Option(help: "Serve GET /metrics (Prometheus text format) on this port, apart from the API (default: no metrics listener).")
    var metricsPort: Int?

    @Option(help: "The address of the metrics listener (default 127.0.0.1).")
    var metricsHost: String?

    @Option(name: .customLong("rp-id"), help: "The relying-party id signed payloads carry (default bioauth.local).")
    var relyingPartyID: String?

    @Option(help: "bcrypt cost, 4-16 (default 12).")
    var bcryptCost: Int?

    @Option(help: "The receipt-signing key's PEM file, created (0600) if missing (default ./bioauth-receipt-key.pem).")
    var receiptKey: String?

    @Option(help: "The key file that seals payment PIN hashes (a pepper outside the database), created (0600) if missing (default ./bioauth-pin-key).")
    var pinKey: String?

    @Option(
        name: .customLong("signin-challenge-limit"),
        help: "Biometric sign-in challenges one key may get per minute (default 20; raise it only for load tests).")
    var signInChallengeLimit: Int?

    @Option(
        name: .customLong("signin-client-limit"),
        help: "Biometric sign-in challenges one client address may get per minute, whatever the keys (default 60).")
    var signInClientLimit: Int?

    @Option(
        name: .customLong("trusted-proxy"),
        help: "A reverse proxy's IP address whose X-Forwarded-For names the client (repeat for several; default none).")
    var trustedProxies: [String] = []

    @Option(help: "Seconds a graceful shutdown (SIGTERM, SIGINT) waits for requests in flight before cancelling them (default 30).")
    var shutdownTimeout: Double?

    @Option(help: "Seconds an access token lives (default 900).")
    var accessTokenLifetime: Double?

    @Option(help: "Seconds a refresh token lives (default 2592000, 30 days).")
    var refreshTokenLifetime: Double?

    @Option(help: "Seconds a biometric sign-in challenge lives (default 120).")
    var loginChallengeLifetime: Double?

    @Option(help: "Seconds a device registration challenge lives (default 300).")
    var registrationChallengeLifetime: Double?

    @Option(help: "Seconds a payment stays pending before it expires, at most 300 (default 300).")
    var paymentLifetime: Double?

    @Option(name: .customLong("app-attest"), help: "The secure environment check: off, report or require (default off).")
    var appAttest: String?

    @Option(name: .customLong("app-attest-app-id"), help: "An app id App Attest accepts, TEAMID.bundle.id (repeat for several).")
    var appAttestAppIDs: [String] = []

    @Option(name: .customLong("app-attest-environment"), help: "production, development or both (default production).")
    var appAttestEnvironment: String?

    @Option(help: "Seconds between purges of what has aged out (default 3600; 0 turns the background job off).")
    var retentionInterval: Double?

    @OptionGroup var retention: RetentionOptions

    @Flag(
        name: .customLong("app-attest-allow-pin"),
        help: "Under --app-attest require, still allow PIN payments, which carry no App Attest proof (default: refused).")
    var appAttestAllowPIN = false

    /// The `BIOAUTH_*` variables under which `bioauth serve` runs with `configuration`'s database, receipt key,
    /// bcrypt cost, relying party, sign-in challenge limits and log level (what `bioauth bench --server-process`
    /// sets); ``serverConfiguration(environment:)`` reads them back.
    static func environment(for configuration: ServerConfiguration) -> [String: String] {
        [
            "BIOAUTH_DATABASE": configuration.databasePath, "BIOAUTH_RECEIPT_KEY": configuration.receiptKeyPath,
            "BIOAUTH_PIN_KEY": configuration.pinKeyPath,
            "BIOAUTH_BCRYPT_COST": String(configuration.bcryptCost), "BIOAUTH_RP_ID": configuration.relyingPartyID,
            "BIOAUTH_SIGNIN_CHALLENGE_LIMIT": String(configuration.signInChallengesPerWindow),
            "BIOAUTH_SIGNIN_CLIENT_LIMIT": String(configuration.signInChallengesPerClient),
            "BIOAUTH_LOG_LEVEL": configuration.logLevel.rawValue,
        ]
    }

    /// The configuration from the options, then the environment, then the defaults.
    func serverConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        func integer(_ name: String) throws -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text) else { throw ValidationError("\(name) must be a whole number, not \(text)") }
            return value
        }
        /// A comma-separated list, blanks around items and empty items dropped.
        func list(_ name: String) -> [String] {
            (environment[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        func seconds(_ name: String) throws -> Double? {
            guard let text = environment[name] else { return nil }
            guard let value = Double(text), value.isFinite else { throw ValidationError("\(name) must be a number of seconds, not \(text)") }
            return value
        }
        configuration.host = host ?? environment["BIOAUTH_HOST"] ?? configuration.host
        configuration.port = try port ?? integer("BIOAUTH_PORT") ?? configuration.port
        configuration.metricsPort = try metricsPort ?? integer("BIOAUTH_METRICS_PORT")
        configuration.metricsHost = metricsHost ?? environment["BIOAUTH_METRICS_HOST"] ?? configuration.metricsHost
        if let format = logFormat ?? environment["BIOAUTH_LOG_FORMAT"] {
            guard let parsed = LogFormat(rawValue: format.lowercased()) else { throw ValidationError("log format must be text or json, not \(format)") }
            configuration.logFormat = parsed
        }
        configuration.databasePath = database ?? environment["BIOAUTH_DATABASE"] ?? configuration.databasePath
        configuration.relyingPartyID = relyingPartyID ?? environment["BIOAUTH_RP_ID"] ?? configuration.relyingPartyID
        configuration.bcryptCost = try bcryptCost ?? integer("BIOAUTH_BCRYPT_COST") ?? configuration.bcryptCost
        configuration.receiptKeyPath = receiptKey ?? environment["BIOAUTH_RECEIPT_KEY"] ?? configuration.receiptKeyPath
        configuration.pinKeyPath = pinKey ?? environment["BIOAUTH_PIN_KEY"] ?? configuration.pinKeyPath
        configuration.accessTokenLifetime =
            try accessTokenLifetime ?? seconds("BIOAUTH_ACCESS_TOKEN_LIFETIME") ?? configuration.accessTokenLifetime
        configuration.shutdownTimeout = try shutdownTimeout ?? seconds("BIOAUTH_SHUTDOWN_TIMEOUT") ?? configuration.shutdownTimeout
        configuration.refreshTokenLifetime =
            try refreshTokenLifetime ?? seconds("BIOAUTH_REFRESH_TOKEN_LIFETIME") ?? configuration.refreshTokenLifetime
        configuration.loginChallengeLifetime =
            try loginChallengeLifetime ?? seconds("BIOAUTH_LOGIN_CHALLENGE_LIFETIME") ?? configuration.loginChallengeLifetime
        configuration.registrationChallengeLifetime =
            try registrationChallengeLifetime ?? seconds("BIOAUTH_REGISTRATION_CHALLENGE_LIFETIME") ?? configuration.registrationChallengeLifetime
        configuration.paymentLifetime = try paymentLifetime ?? seconds("BIOAUTH_PAYMENT_LIFETIME") ?? configuration.paymentLifetime
        configuration.retention.interval =
            try retentionInterval ?? seconds("BIOAUTH_RETENTION_INTERVAL") ?? configuration.retention.interval
        try retention.apply(to: &configuration.retention, environment: environment)
        configuration.signInChallengesPerWindow =
            try signInChallengeLimit ?? integer("BIOAUTH_SIGNIN_CHALLENGE_LIMIT") ?? configuration.signInChallengesPerWindow
        configuration.signInChallengesPerClient =
            try signInClientLimit ?? integer("BIOAUTH_SIGNIN_CLIENT_LIMIT") ?? configuration.signInChallengesPerClient
        configuration.trustedProxies = trustedProxies.isEmpty ? list("BIOAUTH_TRUSTED_PROXIES") : trustedProxies
        if let mode = appAttest ?? environment["BIOAUTH_APP_ATTEST"] {
            guard let parsed = AppAttestPolicy.Mode(rawValue: mode.lowercased()) else {
                throw ValidationError("App Attest mode must be off, report or require, not \(mode)")
            }
            configuration.appAttest.mode = parsed
        }
        configuration.appAttest.allowedAppIDs = appAttestAppIDs.isEmpty ? list("BIOAUTH_APP_ATTEST_APP_IDS") : appAttestAppIDs
        if appAttestAllowPIN {
            configuration.appAttest.allowsPINPaymentsUnderRequire = true
        } else if let allow = environment["BIOAUTH_APP_ATTEST_ALLOW_PIN"] {
            guard let parsed = ["true": true, "false": false][allow.lowercased()] else {
                throw ValidationError("BIOAUTH_APP_ATTEST_ALLOW_PIN must be true or false, not \(allow)")
            }
            configuration.appAttest.allowsPINPaymentsUnderRequire = parsed
        }
        if let environmentName = appAttestEnvironment ?? environment["BIOAUTH_APP_ATTEST_ENVIRONMENT"] {
            switch environmentName.lowercased() {
            case "production": configuration.appAttest.environments = [.production]
            case "development": configuration.appAttest.environments = [.development]
            case "both": configuration.appAttest.environments = [.production, .development]
            default: throw ValidationError("App Attest environment must be production, development or both, not \(environmentName)")
            }
        }
        if let level = logLevel ?? environment["BIOAUTH_LOG_LEVEL"] {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ValidationError("unknown log level \(level)")
            }
            configuration.logLevel = parsed
        }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError("\(error)")
        }
        return configuration
    }

    func run() async throws {
        let configuration = try serverConfiguration()
        let logger = configuration.logFormat.logger(label: "bioauth", level: configuration.logLevel)
        logger.info("BioAuth starting on \(configuration.host):\(configuration.port), database \(redactedDatabaseLocation(configuration.databasePath))")
        if let metricsPort = configuration.metricsPort {
            logger.info("metrics at http://\(configuration.metricsHost):\(metricsPort)/metrics")
        }
        // Until SIGTERM or SIGINT, then a graceful shutdown within the shutdown timeout; exit 0.
        try await BioAuthServerApplication.run(configuration: configuration, logger: logger)
        logger.info("BioAuth stopped")
    }
}
