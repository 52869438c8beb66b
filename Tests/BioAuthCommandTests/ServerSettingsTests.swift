import BioAuthServer
import BioAuthTesting
import Foundation
import Testing

@testable import bioauth

/// One place reads every setting from options, the environment and a config file.
@Suite("bioauth serve: settings")
struct ServerSettingsTests {
    static func file(_ json: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-config-\(UUID().uuidString).json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a config file sets lifetimes and limits; the environment wins over it, and options over both")
    func precedence() throws {
        let path = try Self.file(
            """
            {"port": 9100, "accessTokenLifetime": 600, "maxFailedPasswordAttempts": 3, "accountLockDuration": 1200,
             "pinLockDuration": 60, "rateLimitWindow": 30, "trustedProxies": ["10.0.0.1", "10.0.0.2"], "appAttestAllowPin": true,
             "logFormat": "json", "auditRetentionDays": 3650, "maxRequestBodySize": 32768, "signinChallengeLimit": 7}
            """
        )
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try ServeCommand.parse(["--config", path]).serverConfiguration(environment: [:])
        #expect(fromFile.port == 9100 && fromFile.accessTokenLifetime == 600 && fromFile.maxFailedPasswordAttempts == 3)
        #expect(fromFile.accountLockDuration == 1200 && fromFile.pinLockDuration == 60 && fromFile.rateLimitWindow == 30)
        #expect(fromFile.trustedProxies == ["10.0.0.1", "10.0.0.2"] && fromFile.appAttest.allowsPINPaymentsUnderRequire)
        #expect(fromFile.logFormat == .json && fromFile.retention.auditEvents == 3650 * 86_400 && fromFile.maxRequestBodySize == 32768)

        let environment = ["BIOAUTH_CONFIG": path, "BIOAUTH_PORT": "9200", "BIOAUTH_MAX_FAILED_PASSWORD_ATTEMPTS": "4"]
        let overridden = try ServeCommand.parse(["--signin-challenge-limit", "9"]).serverConfiguration(environment: environment)
        #expect(overridden.port == 9200 && overridden.maxFailedPasswordAttempts == 4, "the environment wins over the file")
        #expect(overridden.signInChallengesPerWindow == 9 && overridden.accessTokenLifetime == 600, "options win; the rest from the file")
    }

    @Test(
        "a bad value stops start-up with a message naming the setting and where it came from",
        arguments: [
            (["--port", "eighty"], [String: String](), "--port must be a whole number, not eighty"),
            ([], ["BIOAUTH_ACCOUNT_LOCK_DURATION": "soon"], "BIOAUTH_ACCOUNT_LOCK_DURATION must be a number, not soon"),
            ([], ["BIOAUTH_APP_ATTEST": "maybe"], "BIOAUTH_APP_ATTEST must be off, report or require, not maybe"),
            (["--max-failed-pin-attempts", "0"], [:], "attempt limits must be at least 1"),
            (["--payment-lifetime", "600"], [:], "payment lifetime must be at most 300 seconds"),
            ([], ["BIOAUTH_SHUTDOWN_DRAIN": "-1"], "shutdown drain must be 0-300 seconds"),
            (["--shutdown-drain", "301"], [:], "shutdown drain must be 0-300 seconds"),
            (["--database", "postgres://u:hunter2@db/x", "--port", "x"], [:], "--port must be a whole number, not x"),
            (["--database-connections", "0"], [:], "database connections must be 1-500, not 0"),
            ([], ["BIOAUTH_DATABASE_CONNECTIONS": "many"], "BIOAUTH_DATABASE_CONNECTIONS must be a whole number, not many"),
            (["--console-idle-timeout", "30"], [:], "console idle timeout must be 60 seconds to 8 hours"),
            (
                ["--console-idle-timeout", "3600", "--console-session-lifetime", "600"], [:],
                "console session lifetime must be at least the console idle timeout and at most 7 days"
            ),
            (
                [], ["BIOAUTH_OUTBOUND_ALLOW": "10.0.0.1/8"],
                "outbound allow list: 10.0.0.1/8 is neither a host name, an address nor a CIDR range with its host bits zero"
            ),
        ]
    )
    func badValues(arguments: [String], environment: [String: String], message: String) throws {
        let command = try ServeCommand.parse(arguments)
        let error = #expect(throws: (any Error).self) { try command.serverConfiguration(environment: environment) }
        #expect(error.map { "\($0)" } == message)
    }

    @Test("a config file with an unknown key, a wrong type or bad JSON is refused, naming the file and the key")
    func badFiles() throws {
        for (json, message) in [
            (#"{"prot": 8080}"#, "unknown setting prot; did you mean port?"),
            (#"{"signinChalengeLimit": 3}"#, "unknown setting signinChalengeLimit; did you mean signinChallengeLimit?"),
            (#"{"port": "eighty"}"#, "config file"),
            (#"{"port": {"value": 1}}"#, "is not a JSON object of strings, numbers, booleans and lists of strings"),
            ("port = 8080", "is not a JSON object"),
        ] {
            let path = try Self.file(json)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = #expect(throws: (any Error).self) { try ServeCommand.parse(["--config", path]).serverConfiguration(environment: [:]) }
            #expect(error.map { "\($0)".contains(message) && "\($0)".contains(path) } == true, "\(String(describing: error))")
        }
        let missing = #expect(throws: (any Error).self) {
            try ServeCommand.parse(["--config", "/no/such/bioauth.json"]).serverConfiguration(environment: [:])
        }
        #expect(missing.map { "\($0)" } == "cannot read the config file /no/such/bioauth.json")
    }

    @Test("a misspelled setting is answered with the one meant: an unknown key, a BIOAUTH_ variable one edit away; others are left alone")
    func didYouMean() throws {
        let unknown = #expect(throws: (any Error).self) {
            try ServeCommand.parse(["--config", try Self.file(#"{"receiptKy": "k"}"#)]).serverConfiguration(environment: [:])
        }
        #expect(unknown.map { "\($0)".hasSuffix("unknown setting receiptKy; did you mean receiptKey?") } == true)
        let far = #expect(throws: (any Error).self) {
            try ServeCommand.parse(["--config", try Self.file(#"{"colour": "blue"}"#)]).serverConfiguration(environment: [:])
        }
        #expect(far.map { "\($0)".hasSuffix("unknown setting colour") } == true, "no guess when nothing is near")
        let warnings = ServerSettings.misspelledEnvironment([
            "BIOAUTH_PROT": "8080", "BIOAUTH_DATABSE": "x.sqlite", "BIOAUTH_PORT": "1", "BIOAUTH_CONFIG": "c.json",
            "BIOAUTH_TEST_POSTGRES_URL": "postgres://", "BIOAUTH_SERVER": "http://x", "PATH": "/bin",
        ])
        #expect(
            warnings == [
                "BIOAUTH_DATABSE is not a setting and is ignored; did you mean BIOAUTH_DATABASE?",
                "BIOAUTH_PROT is not a setting and is ignored; did you mean BIOAUTH_PORT?",
            ],
            "\(warnings)"
        )
        #expect(ServerSettings.closest(to: "a", among: ["b", "c"]) == nil, "a tie is no guess")
        #expect(ServerSettings.editDistance(Array("prot"), Array("port")) == 1 && ServerSettings.editDistance([], Array("ab")) == 2)
    }

    @Test("serve --help says the database may be a PostgreSQL URL, and that a new SQLite file is owner-only")
    func helpNamesPostgres() {
        let help = ServeCommand.helpMessage(columns: 1000)
        #expect(help.contains("postgres://user:password@host:5432/bioauth?sslmode=require") && help.contains("created 0600"))
    }

    @Test("--print-config shows every setting with its source, and no database password")
    func printConfig() throws {
        let (configuration, sources) = try ServerSettings.resolve(
            flags: ["port": "9000"],
            configFile: nil,
            environment: ["BIOAUTH_DATABASE": "postgres://bioauth:hunter2@db.internal/bioauth", "BIOAUTH_RP_ID": "bank.example"]
        )
        let text = ServerSettings.describe(configuration, sources: sources)
        #expect(!text.contains("hunter2"))
        let lines = text.split(separator: "\n")
        #expect(lines.count == ServerSettings.all.count)
        #expect(
            lines.contains {
                $0.hasPrefix("database ") && $0.contains("postgres://bioauth:***@db.internal/bioauth") && $0.hasSuffix("(BIOAUTH_DATABASE)")
            }
        )
        #expect(lines.contains { $0.hasPrefix("port ") && $0.contains("9000") && $0.hasSuffix("(--port)") })
        #expect(lines.contains { $0.hasPrefix("rpId ") && $0.contains("bank.example") })
        #expect(lines.contains { $0.hasPrefix("accessTokenLifetime ") && $0.contains("900") && $0.hasSuffix("(default)") })
        // Unset, the purge's batch size is the configured engine's.
        #expect(lines.contains { $0.hasPrefix("retentionBatchSize ") && $0.contains(" 50 ") && $0.hasSuffix("(default)") })
        let (sqlite, sqliteSources) = try ServerSettings.resolve(
            flags: [:],
            configFile: nil,
            environment: ["BIOAUTH_DATABASE": "/var/lib/bioauth.sqlite"]
        )
        let sqliteLines = ServerSettings.describe(sqlite, sources: sqliteSources).split(separator: "\n")
        #expect(sqliteLines.contains { $0.hasPrefix("retentionBatchSize ") && $0.contains(" 10 ") && $0.hasSuffix("(default)") })
    }

    @Test("--print-config shows the passkey origin and rp id the web page brings, and says where they come from")
    func printConfigDerivedPasskeyDefaults() throws {
        func line(_ key: String, _ flags: [String: String]) throws -> String {
            let (configuration, sources) = try ServerSettings.resolve(flags: flags, configFile: nil, environment: [:])
            let lines = ServerSettings.describe(configuration, sources: sources).split(separator: "\n")
            return String(try #require(lines.first { $0.hasPrefix(key + " ") }))
        }
        let web = ["passkeyWeb": "true", "port": "9000"]
        #expect(try line("passkeyOrigins", web).contains("http://localhost:9000  (default: the web page's own origin on this port)"))
        #expect(try line("passkeyRpId", web).contains("localhost  (default: the first passkey origin's host)"))
        // Given values keep their own source; nothing is derived when passkeys are off.
        let given = ["passkeyWeb": "true", "passkeyOrigins": "https://www.bank.example", "passkeyRpId": "bank.example"]
        #expect(try line("passkeyOrigins", given).hasSuffix("https://www.bank.example  (--passkey-origins)"))
        #expect(try line("passkeyRpId", given).hasSuffix("bank.example  (--passkey-rp-id)"))
        #expect(try line("passkeyRpId", ["passkeyOrigins": "https://www.bank.example"]).contains("www.bank.example  (default: the first"))
        #expect(try line("passkeyOrigins", [:]).hasSuffix("-  (default)"))
        #expect(try line("passkeyRpId", [:]).hasSuffix("-  (default)"))
    }

    @Test("every setting's three names follow from its key, so the environment names stay as documented")
    func names() {
        let settings = Dictionary(uniqueKeysWithValues: ServerSettings.all.map { ($0.key, $0) })
        #expect(settings["signinChallengeLimit"]?.environmentName == "BIOAUTH_SIGNIN_CHALLENGE_LIMIT")
        #expect(settings["signinChallengeLimit"]?.optionName == "--signin-challenge-limit")
        #expect(settings["rpId"]?.environmentName == "BIOAUTH_RP_ID")
        #expect(settings["appAttestAppIds"]?.environmentName == "BIOAUTH_APP_ATTEST_APP_IDS")
        #expect(settings["idempotencyKeyRetentionHours"]?.environmentName == "BIOAUTH_IDEMPOTENCY_KEY_RETENTION_HOURS")
        #expect(Set(ServerSettings.all.map(\.key)).count == ServerSettings.all.count, "no key twice")
    }
}

extension ServerSettingsTests {
    @Test("every option of bioauth serve reaches a setting of the table")
    func everyOptionMapped() throws {
        let arguments = [
            "--host", "h", "--port", "1", "--database", "d", "--database-connections", "4", "--log-level", "info", "--log-format", "text",
            "--metrics-port", "2",
            "--metrics-host", "m", "--rp-id", "r", "--bcrypt-cost", "4", "--password-hashing-threads", "1", "--receipt-key", "k",
            "--pin-key", "p", "--access-token-lifetime", "1", "--refresh-token-lifetime", "1", "--login-challenge-lifetime", "1",
            "--registration-challenge-lifetime", "1", "--payment-lifetime", "1", "--service-token-lifetime", "1", "--max-failed-password-attempts",
            "1",
            "--account-lock-duration", "1", "--max-failed-payment-attempts", "1", "--max-failed-pin-attempts", "1",
            "--pin-lock-duration", "1", "--signin-challenge-limit", "1", "--signin-client-limit", "1", "--service-token-request-limit", "1",
            "--client-auth-failure-limit", "1", "--rate-limit-window", "1",
            "--trusted-proxy", "::1", "--max-request-body-size", "2048", "--shutdown-timeout", "1", "--shutdown-drain", "1",
            "--retention-interval", "1",
            "--token-retention-days", "1", "--audit-retention-days", "1", "--idempotency-key-retention-hours", "1",
            "--retention-batch-rest", "0.5", "--retention-batch-size", "500",
            "--app-attest", "off", "--app-attest-app-id", "ABCDEFGHIJ.a.b", "--app-attest-environment", "both", "--app-attest-allow-pin",
            "--webhook-poll-interval", "1", "--webhook-timeout", "1", "--webhook-retry-base", "1", "--webhook-retry-window-hours", "1",
            "--webhook-rotation-overlap-hours", "1", "--webhook-retention-days", "1", "--console",
            "--console-idle-timeout", "600", "--console-session-lifetime", "3600", "--console-port", "9465", "--console-host", "10.0.0.5",
            "--console-totp-issuer", "Bank Staging", "--console-time-zone", "Asia/Shanghai",
            "--outbound-allow", "10.0.0.0/8", "--outbound-allow", "hooks.bank.internal",
            "--passkey-origins", "https://www.bank.example", "--passkey-rp-id", "bank.example", "--passkey-rp-name", "Bank",
            "--passkey-attestation", "none", "--passkey-attestation-roots", "", "--passkey-web",
            "--approval-lifetime", "60", "--approval-max-pending", "2", "--approval-requests-per-customer", "4",
            "--first-device-binding", "binding-code", "--binding-code-lifetime", "300", "--cooling-off", "3600", "--cooling-off-payment-limit",
            "5000", "--step-up-lifetime", "120",
        ]
        let flags = try ServeCommand.parse(arguments).flags
        let keys = Set(ServerSettings.all.map(\.key))
        #expect(
            Set(flags.keys) == keys,
            "options without a setting: \(Set(flags.keys).subtracting(keys)); settings without an option: \(keys.subtracting(flags.keys))"
        )
        for setting in ServerSettings.all where !["trustedProxies", "appAttestAppIds"].contains(setting.key) {
            #expect(arguments.contains(setting.optionName), "\(setting.key) is \(setting.optionName) on the command line")
        }
    }
}

extension ServerSettingsTests {
    @Test(
        "passkey settings: origins, rp id and attestation roots are read; an http origin off localhost, an origin off the rp id, require without roots and an unreadable root file stop start-up"
    )
    func passkeySettings() throws {
        let roots = FileManager.default.temporaryDirectory.appendingPathComponent("passkey-roots-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: roots) }
        try SimulatedAppAttestProvider.TestCA().certificate.serializeAsPEM().pemString.write(to: roots, atomically: true, encoding: .utf8)
        let read = try ServerSettings.resolve(
            flags: [:],
            configFile: nil,
            environment: [
                "BIOAUTH_PASSKEY_ORIGINS": "https://www.bank.example, https://bank.example", "BIOAUTH_PASSKEY_RP_ID": "bank.example",
                "BIOAUTH_PASSKEY_ATTESTATION": "require",
                "BIOAUTH_PASSKEY_ATTESTATION_ROOTS": "packed=\(roots.path)",
            ]
        ).configuration.passkeys
        #expect(read.origins == ["https://www.bank.example", "https://bank.example"] && read.resolvedRelyingPartyID == "bank.example")
        #expect(read.requireTrustedAttestation && read.attestationRoots["packed"]?.count == 1)

        func refused(_ environment: [String: String]) -> String {
            do {
                _ = try ServerSettings.resolve(flags: [:], configFile: nil, environment: environment)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refused(["BIOAUTH_PASSKEY_ORIGINS": "http://bank.example"]).contains("must be https"))
        #expect(
            refused(["BIOAUTH_PASSKEY_ORIGINS": "https://www.bank.example,https://bank.example"]).contains(
                "not on the relying-party id www.bank.example"
            ),
            "the default rp id is the first origin's host, which the second is not on"
        )
        #expect(
            refused(["BIOAUTH_PASSKEY_ORIGINS": "https://evil.example", "BIOAUTH_PASSKEY_RP_ID": "bank.example"]).contains(
                "not on the relying-party id"
            )
        )
        #expect(refused(["BIOAUTH_PASSKEY_ORIGINS": "https://bank.example/login"]).contains("scheme://host[:port]"))
        #expect(
            refused(["BIOAUTH_PASSKEY_ORIGINS": "https://bank.example", "BIOAUTH_PASSKEY_ATTESTATION": "require"]).contains(
                "needs passkey attestation roots"
            )
        )
        #expect(refused(["BIOAUTH_PASSKEY_ATTESTATION_ROOTS": "packed=/nonexistent.pem"]).contains("holds no PEM certificate"))
        #expect(refused(["BIOAUTH_PASSKEY_ATTESTATION": "maybe"]).contains("must be none or require"))
        // The web page alone: http://localhost on the configured port.
        var configuration = ServerConfiguration()
        configuration.passkeys.webPageEnabled = true
        configuration.port = 8080
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.port = 0
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
