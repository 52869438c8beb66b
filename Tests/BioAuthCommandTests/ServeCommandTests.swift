import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import Testing

@testable import bioauth

@Suite("bioauth serve")
struct ServeCommandTests {
    @Test("defaults: loopback, port 8080, ./bioauth.sqlite, production bcrypt cost")
    func defaults() throws {
        let configuration = try ServeCommand.parse([]).serverConfiguration(environment: [:])
        #expect(configuration.host == "127.0.0.1" && configuration.port == 8080)
        #expect(configuration.databasePath == "./bioauth.sqlite" && configuration.bcryptCost == 12)
        #expect(configuration.logLevel == .info && configuration.signInChallengesPerWindow == 20)
    }

    @Test("environment variables set everything; flags win over them")
    func precedence() throws {
        let environment = [
            "BIOAUTH_HOST": "0.0.0.0", "BIOAUTH_PORT": "9000", "BIOAUTH_DATABASE": "/var/lib/bioauth.sqlite",
            "BIOAUTH_LOG_LEVEL": "DEBUG", "BIOAUTH_RP_ID": "bank.example", "BIOAUTH_BCRYPT_COST": "10",
            "BIOAUTH_SIGNIN_CHALLENGE_LIMIT": "500", "BIOAUTH_SIGNIN_CLIENT_LIMIT": "900", "BIOAUTH_TRUSTED_PROXIES": "10.0.0.1, ::1",
        ]
        let fromEnvironment = try ServeCommand.parse([]).serverConfiguration(environment: environment)
        #expect(fromEnvironment.host == "0.0.0.0" && fromEnvironment.port == 9000)
        #expect(fromEnvironment.databasePath == "/var/lib/bioauth.sqlite" && fromEnvironment.logLevel == .debug)
        #expect(fromEnvironment.relyingPartyID == "bank.example" && fromEnvironment.bcryptCost == 10)
        #expect(fromEnvironment.signInChallengesPerWindow == 500 && fromEnvironment.signInChallengesPerClient == 900)
        #expect(fromEnvironment.trustedProxies == ["10.0.0.1", "::1"])
        let flags = try ServeCommand.parse([
            "--port", "7000", "--database", ":memory:", "--log-level", "warning", "--signin-challenge-limit", "9", "--signin-client-limit", "30",
            "--trusted-proxy", "192.0.2.7",
        ]).serverConfiguration(environment: environment)
        #expect(flags.signInChallengesPerClient == 30 && flags.trustedProxies == ["192.0.2.7"])
        #expect(flags.port == 7000 && flags.databasePath == ":memory:" && flags.logLevel == .warning)
        #expect(flags.signInChallengesPerWindow == 9)
        #expect(flags.host == "0.0.0.0")
    }

    @Test("retention: the interval and periods from flags and the environment; the defaults otherwise")
    func retention() throws {
        let defaults = try ServeCommand.parse([]).serverConfiguration(environment: [:]).retention
        #expect(defaults == RetentionPolicy())
        #expect(
            defaults.interval == 3600 && defaults.tokens == 30 * 86_400 && defaults.auditEvents == 2557 * 86_400 && defaults.idempotencyKeys == 86_400
        )
        let environment = [
            "BIOAUTH_RETENTION_INTERVAL": "0", "BIOAUTH_TOKEN_RETENTION_DAYS": "7", "BIOAUTH_AUDIT_RETENTION_DAYS": "3650",
            "BIOAUTH_IDEMPOTENCY_KEY_RETENTION_HOURS": "48",
        ]
        let read = try ServeCommand.parse([]).serverConfiguration(environment: environment).retention
        #expect(read.interval == 0 && read.tokens == 7 * 86_400 && read.auditEvents == 3650 * 86_400 && read.idempotencyKeys == 48 * 3600)
        let flags = try ServeCommand.parse(["--retention-interval", "600", "--audit-retention-days", "400"])
            .serverConfiguration(environment: environment).retention
        #expect(flags.interval == 600 && flags.auditEvents == 400 * 86_400 && flags.tokens == 7 * 86_400)
        #expect(throws: (any Error).self) {
            try ServeCommand.parse(["--idempotency-key-retention-hours", "0.5"]).serverConfiguration(environment: [:])
        }
    }

    @Test("the environment made for a configuration (bench --server-process) reads back as that configuration")
    func environmentRoundTrip() throws {
        var configuration = ServerConfiguration()
        configuration.databasePath = "/tmp/bench.sqlite"
        configuration.receiptKeyPath = "/tmp/key.pem"
        configuration.pinKeyPath = "/tmp/pin-key"
        configuration.bcryptCost = 5
        configuration.relyingPartyID = "bench.example"
        configuration.signInChallengesPerWindow = 1_000_000
        configuration.signInChallengesPerClient = 2_000_000
        configuration.logLevel = .error
        configuration.retention.interval = 2.5
        configuration.retention.batchSize = 75
        configuration.retention.batchRest = 3.5
        configuration.outbound.allowed = ["127.0.0.1", "hooks.bank.internal"]
        let read = try ServeCommand.parse([]).serverConfiguration(environment: ServeCommand.environment(for: configuration))
        #expect(read.databasePath == configuration.databasePath && read.receiptKeyPath == configuration.receiptKeyPath)
        #expect(read.pinKeyPath == "/tmp/pin-key")
        #expect(read.bcryptCost == 5 && read.relyingPartyID == "bench.example")
        #expect(read.signInChallengesPerWindow == 1_000_000 && read.signInChallengesPerClient == 2_000_000 && read.logLevel == .error)
        #expect(read.retention.interval == 2.5)
        #expect(read.retention.batchSize == 75 && read.retention.batchRest == 3.5)
        #expect(read.outbound.allowed == ["127.0.0.1", "hooks.bank.internal"])
    }

    @Test(
        "bad values are refused with a message before anything starts",
        arguments: [
            (["--port", "70000"], [String: String]()), ([], ["BIOAUTH_PORT": "eighty"]), (["--log-level", "loud"], [:]),
            (["--bcrypt-cost", "3"], [:]), (["--bcrypt-cost", "31"], [:]), ([], ["BIOAUTH_BCRYPT_COST": "17"]), ([], ["BIOAUTH_RP_ID": ""]),
            (["--signin-challenge-limit", "0"], [:]), ([], ["BIOAUTH_SIGNIN_CHALLENGE_LIMIT": "many"]), (["--signin-client-limit", "0"], [:]),
            (["--trusted-proxy", "proxy.bank.example"], [:]),
            (["--app-attest", "require"], [:]),  // no app id
            (["--app-attest", "sometimes", "--app-attest-app-id", "ABCDE12345.com.bank.app"], [:]),
            (["--app-attest", "report", "--app-attest-app-id", "com.bank.app"], [:]),  // no team id
            (
                [],
                [
                    "BIOAUTH_APP_ATTEST": "require", "BIOAUTH_APP_ATTEST_APP_IDS": "ABCDE12345.com.bank.app",
                    "BIOAUTH_APP_ATTEST_ENVIRONMENT": "staging",
                ]
            ),
        ]
    )
    func refused(arguments: [String], environment: [String: String]) throws {
        let command = try ServeCommand.parse(arguments)
        #expect(throws: (any Error).self) { try command.serverConfiguration(environment: environment) }
    }

    @Test("the secure environment check: off by default; mode, app ids and environment from flags or the environment")
    func appAttest() throws {
        #expect(try ServeCommand.parse([]).serverConfiguration(environment: [:]).appAttest.mode == .off)
        let environment = [
            "BIOAUTH_APP_ATTEST": "report", "BIOAUTH_APP_ATTEST_APP_IDS": "ABCDE12345.com.bank.app, ABCDE12345.com.bank.app.beta",
            "BIOAUTH_APP_ATTEST_ENVIRONMENT": "both",
        ]
        #expect(try ServeCommand.parse([]).serverConfiguration(environment: [:]).appAttest.allowsPINPaymentsUnderRequire == false)
        #expect(try ServeCommand.parse(["--app-attest-allow-pin"]).serverConfiguration(environment: [:]).appAttest.allowsPINPaymentsUnderRequire)
        #expect(
            try ServeCommand.parse([]).serverConfiguration(environment: ["BIOAUTH_APP_ATTEST_ALLOW_PIN": "TRUE"]).appAttest
                .allowsPINPaymentsUnderRequire
        )
        #expect(throws: (any Error).self) { try ServeCommand.parse([]).serverConfiguration(environment: ["BIOAUTH_APP_ATTEST_ALLOW_PIN": "yes"]) }
        let fromEnvironment = try ServeCommand.parse([]).serverConfiguration(environment: environment).appAttest
        #expect(fromEnvironment.mode == .report && fromEnvironment.environments == [.production, .development])
        #expect(fromEnvironment.allowedAppIDs == ["ABCDE12345.com.bank.app", "ABCDE12345.com.bank.app.beta"])
        let flags = try ServeCommand.parse(["--app-attest", "require", "--app-attest-app-id", "ZZZZZ99999.cn.bank.pay"])
            .serverConfiguration(environment: environment).appAttest
        #expect(flags.mode == .require && flags.allowedAppIDs == ["ZZZZZ99999.cn.bank.pay"])
    }

    @Test("a PostgreSQL URL is accepted as the database, and its password never reaches the log")
    func postgresLocation() throws {
        let configuration = try ServeCommand.parse(["--database", "postgres://bioauth:s3cret@db.internal:5432/bioauth?sslmode=require"])
            .serverConfiguration(environment: [:])
        #expect(configuration.databasePath.hasPrefix("postgres://"))
        let logged = redactedDatabaseLocation(configuration.databasePath)
        #expect(!logged.contains("s3cret") && logged.contains("db.internal"))
        #expect(redactedDatabaseLocation("./bioauth.sqlite") == "./bioauth.sqlite")
        #expect(redactedDatabaseLocation("postgresql://u:s3cret@db/x") == "postgresql://u:***@db/x")
        // One reading of a location's engine, for the server, the redaction and the bench alike.
        #expect(DatabaseDialect(location: configuration.databasePath) == .postgres)
        #expect(DatabaseDialect(location: "postgresql://db/x") == .postgres)
        for sqlite in ["./bioauth.sqlite", ":memory:", "/var/lib/postgres://x.sqlite", "Postgres://db/x"] {
            #expect(DatabaseDialect(location: sqlite) == .sqlite, "\(sqlite)")
        }
    }
}

@Suite("Lifetimes against a running server")
struct LifetimeTests {
    @Test("lifetimes are set from the environment or flags; bad ones stop start-up with the setting's name")
    func settings() throws {
        let environment = ["BIOAUTH_ACCESS_TOKEN_LIFETIME": "60", "BIOAUTH_PAYMENT_LIFETIME": "90.5", "BIOAUTH_LOGIN_CHALLENGE_LIFETIME": "30"]
        let read = try ServeCommand.parse(["--refresh-token-lifetime", "3600", "--registration-challenge-lifetime", "45"])
            .serverConfiguration(environment: environment)
        #expect(read.accessTokenLifetime == 60 && read.paymentLifetime == 90.5 && read.loginChallengeLifetime == 30)
        #expect(read.refreshTokenLifetime == 3600 && read.registrationChallengeLifetime == 45)
        for (arguments, environment, name) in [
            (["--payment-lifetime", "301"], [String: String](), "payment lifetime"),
            (["--access-token-lifetime", "0"], [:], "access token lifetime"),
            ([], ["BIOAUTH_LOGIN_CHALLENGE_LIFETIME": "soon"], "BIOAUTH_LOGIN_CHALLENGE_LIFETIME"),
            ([], ["BIOAUTH_REFRESH_TOKEN_LIFETIME": "-5"], "refresh token lifetime"),
        ] {
            #expect(throws: (any Error).self) { try ServeCommand.parse(arguments).serverConfiguration(environment: environment) }
            do {
                _ = try ServeCommand.parse(arguments).serverConfiguration(environment: environment)
            } catch {
                #expect("\(error)".contains(name), "\(error)")
            }
        }
    }

    @Test(
        "a server started with one-second lifetimes lets tokens and payments expire, as a client sees it",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func expiry() async throws {
        try await ServerProcessFixture.run("lifetimes") { executable, folder, http in
            let database = folder.appendingPathComponent("bioauth.sqlite")
            try await ServerProcessFixture.registerPayees([("coffee-1", "Coffee Shop")], in: database)
            let settings = ServerProcessFixture.settings(
                in: folder,
                database: database.path,
                ["BIOAUTH_BCRYPT_COST": "4", "BIOAUTH_ACCESS_TOKEN_LIFETIME": "1", "BIOAUTH_PAYMENT_LIFETIME": "1"]
            )
            let server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            do {
                try await Self.expire(on: server.url)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }

    /// Tokens and a payment on a server with one-second lifetimes, before and after they expire.
    static func expire(on url: URL) async throws {
        let api = BioAuthAPI(serverURL: url)
        _ = try await api.createAccount(username: "alice", password: "correct horse")
        var tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "phone-1")
        /// Runs `step` with the current access token; a token that expired in between (a second is short on a loaded
        /// machine: with the whole suite running on two cores, five tries were once not enough) is refreshed and the step
        /// tried again, as a client does, up to a hundred times: it fails only if no request of a hundred is answered within
        /// a second of its token.
        func authorized<T>(_ step: (String) async throws -> T) async throws -> T {
            for _ in 0..<100 {
                do {
                    return try await step(tokens.accessToken)
                } catch  where APIProblem.code(of: error) == "token_expired" {
                    tokens = try await api.refresh(tokens.refreshToken)
                }
            }
            return try await step(tokens.accessToken)
        }
        try await authorized { try await api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: $0) }
        let payment = try await authorized {
            try await api.createPayment(
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "coffee-1",
                payeeName: "Coffee Shop",
                idempotencyKey: "o-1",
                accessToken: $0
            )
        }
        #expect(payment.expiresAt.timeIntervalSince(Date()) <= 1.5)
        let lastUsed = tokens.accessToken
        try await Task.sleep(for: .milliseconds(1600))
        await #expect { _ = try await api.devices(accessToken: lastUsed) } throws: { APIProblem.code(of: $0) == "token_expired" }
        // The steps after the expiry refresh too: on a loaded machine a fresh token once ran out between them (CI, 2026-11-28).
        tokens = try await api.refresh(tokens.refreshToken)
        await #expect {
            _ = try await authorized { try await api.authorizeWithPIN(payment.id, pin: "258046", accessToken: $0) }
        } throws: {
            APIProblem.code(of: $0) == "payment_expired"
        }
        #expect(try await authorized { try await api.payment(payment.id, accessToken: $0) }.status == "expired")
    }
}
