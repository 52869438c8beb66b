import BioAuthCore
import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import ServiceLifecycle

/// Builds the BioAuth server: opens (and migrates) the database, loads (or creates) the receipt key, starts
/// the password hashing threads, and wires the generated API into a Hummingbird application.
///
/// ```swift
/// import BioAuthServer
/// import Logging
///
/// var configuration = ServerConfiguration()
/// configuration.databasePath = ":memory:"
/// try await BioAuthServerApplication.run(configuration: configuration, logger: Logger(label: "bioauth"))
/// ```
public enum BioAuthServerApplication {
    /// Builds the server and runs it until SIGTERM or SIGINT, then shuts down gracefully: fails readiness for
    /// ``ServerConfiguration/shutdownDrain`` while still serving (see ``ServerConfiguration/shutdownDrain``), stops
    /// accepting connections, lets requests in flight finish for up to ``ServerConfiguration/shutdownTimeout`` (then
    /// cancels them), and closes the database. Returns normally after a shutdown.
    public static func run(
        configuration: ServerConfiguration,
        clock: any WallClock = SystemClock(),
        random: any RandomSource = SystemRandomSource(),
        logger: Logger,
        metrics: ServerMetrics = .prometheus()
    ) async throws {
        let (app, service) = try await open(configuration: configuration, clock: clock, random: random, logger: logger, metrics: metrics)
        // In reverse order at shutdown: the drain first, then the application.
        let drain = ShutdownDrain(state: service.shutdown, delay: .milliseconds(Int64(configuration.shutdownDrain * 1000)), logger: logger)
        var group = ServiceGroupConfiguration(services: [app, drain], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .milliseconds(Int64((configuration.shutdownDrain + configuration.shutdownTimeout) * 1000))
        try await ServiceGroup(configuration: group).run()
    }

    /// A ready-to-run application. The database and the hashing threads are closed when it shuts down. Its metrics go to
    /// `metrics`, served at `GET /metrics` on ``ServerConfiguration/metricsPort`` when that is set. Run it in your own
    /// service group; ``ServerConfiguration/shutdownDrain`` is ``run(configuration:clock:random:logger:metrics:)``'s and
    /// does not apply to it.
    public static func make(
        configuration: ServerConfiguration,
        clock: any WallClock = SystemClock(),
        random: any RandomSource = SystemRandomSource(),
        logger: Logger,
        metrics: ServerMetrics = .prometheus()
    ) async throws -> some ApplicationProtocol {
        try await open(configuration: configuration, clock: clock, random: random, logger: logger, metrics: metrics).app
    }

    /// The application and its service over the configured database, which is opened (and migrated) here.
    private static func open(
        configuration: ServerConfiguration,
        clock: any WallClock,
        random: any RandomSource,
        logger: Logger,
        metrics: ServerMetrics
    ) async throws -> (app: some ApplicationProtocol, service: BioAuthService) {
        try configuration.validate()
        let database = try await openDatabase(configuration.databasePath, connections: configuration.databaseConnections, logger: logger)
        do {
            return try await build(
                configuration: configuration,
                database: database,
                clock: clock,
                random: random,
                logger: logger,
                metrics: metrics
            )
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// The application and its service over an open database (tests inspect the database directly). With
    /// ``ServerConfiguration/metricsPort`` set, a second listener serves `GET /metrics` from `metrics`.
    static func build(
        configuration: ServerConfiguration,
        database: any DatabaseExecutor,
        clock: any WallClock,
        random: any RandomSource,
        logger: Logger,
        metrics: ServerMetrics = .prometheus(),
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
        onMetricsServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
        onConsoleServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) async throws -> (app: some ApplicationProtocol, service: BioAuthService) {
        var configuration = configuration
        configuration.passkeys.applyDefaultOrigin(port: configuration.port)
        try configuration.validate()
        let database = MeasuredDatabaseExecutor(base: database, metrics: metrics)
        guard let documentURL = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw ConfigurationError(message: "the OpenAPI document is missing from the build")
        }
        let document = try Data(contentsOf: documentURL)
        let receipts = try ReceiptSigner.load(path: configuration.receiptKeyPath, logger: logger)
        let sealers = try Sealers.load(path: configuration.pinKeyPath, logger: logger)
        let passwords = try await PasswordHasher.start(
            cost: configuration.bcryptCost,
            threads: configuration.passwordHashingThreads,
            metrics: metrics
        )
        let service = BioAuthService(
            configuration: configuration,
            database: database,
            clock: clock,
            random: random,
            passwords: passwords,
            receipts: receipts,
            sealers: sealers,
            logger: logger,
            metrics: metrics
        )
        do {
            // PIN hashes stored before the PIN key existed are sealed now; a key that does not match the stored
            // hashes stops start-up instead of failing every PIN payment.
            try await service.sealLegacyPINHashes()
            // Webhook secrets stored in clear by an earlier version are sealed the same way, under the same file.
            try await service.sealLegacyWebhookSecrets()
            // So are console operators' TOTP keys.
            try await Operators(service: service).sealLegacyTOTPKeys()
            // Payees registered before names were kept apart by their look-alike keys get them now.
            for clash in try await PayeeRegistry(database: database, clock: clock).storeLegacyLookalikeKeys() {
                logger.warning(
                    "a payee's name looks like another's: rename one (bioauth admin payee register ID --name NAME)",
                    metadata: ["payee": "\(clash.id)", "looks_like": "\(clash.looksLike)"]
                )
            }
            // The signing key is published (and must not be one a rotation retired).
            try await service.registerReceiptKey(path: configuration.receiptKeyPath)
        } catch {
            try? await passwords.shutdown()
            throw error
        }

        let handler = APIHandler(service: service, openAPIDocument: document)
        // The routes' methods, for 405 answers, learned from the same registrations the router gets.
        let routes = RouteCollector()
        try handler.registerHandlers(on: routes)
        let router = Router(context: BioAuthRequestContext.self)
        router.add(middleware: HTTPProblemMiddleware(maxBodySize: configuration.maxRequestBodySize, routes: routes.routes, metrics: metrics))
        router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
        // Compact JSON (OpenAPIRuntime pretty-prints by default). Keys stay sorted, so the same resource is always
        // the same bytes: an idempotent replay answers exactly what the first request got.
        try handler.registerHandlers(
            on: router,
            configuration: .init(dateTranscoder: WireDateTranscoder(), jsonEncodingOptions: [.sortedKeys]),
            middlewares: [
                ProblemMiddleware(logger: logger, metrics: metrics), AcceptMiddleware(), AuthorizationMiddleware(), CookieMiddleware(),
                CredentialMiddleware(service: service, logger: logger), StrictJSONMiddleware(maxBodySize: configuration.maxRequestBodySize),
                ByteOrderMarkMiddleware(maxBodySize: configuration.maxRequestBodySize),
            ]
        )

        var services: [any Service] = [ResourceCloser(database: database, passwords: passwords, logger: logger)]
        if configuration.consoleEnabled {
            let console = try await Console.load(service: service)
            if let consolePort = configuration.consolePort {
                // Its own listener only: /console on the API's listener is then 404 like any unknown path.
                let consoleRouter = Router(context: BioAuthRequestContext.self)
                consoleRouter.add(middleware: HTTPProblemMiddleware(maxBodySize: configuration.maxRequestBodySize, metrics: metrics))
                consoleRouter.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
                console.register(on: consoleRouter)
                var consoleLogger = logger
                consoleLogger[metadataKey: "listener"] = "console"
                services.append(
                    Application(
                        router: consoleRouter,
                        server: .http1(configuration: .init(additionalChannelHandlers: [FramingErrorHandler(metrics: metrics)])),
                        configuration: .init(address: .hostname(configuration.consoleHost, port: consolePort), serverName: "BioAuth"),
                        onServerRunning: onConsoleServerRunning,
                        logger: consoleLogger
                    )
                )
            } else {
                console.register(on: router)
            }
        }
        if configuration.passkeys.webPageEnabled {
            try PasskeyWebPage.load().register(on: router)
        }

        if configuration.retention.interval > 0 {
            let retention = Retention(database: database, configuration: configuration, clock: clock, metrics: metrics)
            services.append(RetentionJob(retention: retention, interval: configuration.retention.interval, logger: logger))
        }
        if configuration.webhooks.pollInterval > 0 {
            services.append(WebhookDispatcher(service: service))
        }
        if let metricsPort = configuration.metricsPort {
            services.append(
                metricsApplication(
                    metrics: metrics,
                    host: configuration.metricsHost,
                    port: metricsPort,
                    logger: logger,
                    onServerRunning: onMetricsServerRunning
                )
            )
        }
        let app = Application(
            router: router,
            server: .http1(
                configuration: .init(additionalChannelHandlers: [FramingErrorHandler(metrics: metrics), ConnectionCounter(metrics: metrics)])
            ),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "BioAuth"),
            services: services,
            onServerRunning: onServerRunning,
            logger: logger
        )
        return (app, service)
    }

    /// The metrics listener: `GET /metrics` in Prometheus's text format, on its own address so that it is never on the
    /// public one by accident.
    private static func metricsApplication(
        metrics: ServerMetrics,
        host: String,
        port: Int,
        logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void
    ) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            let body = metrics.exposition() ?? []
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
            )
        }
        var metricsLogger = logger
        metricsLogger[metadataKey: "listener"] = "metrics"
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "BioAuth"),
            onServerRunning: onServerRunning,
            logger: metricsLogger
        )
    }
}

/// Closes the database and stops the hashing threads when the application shuts down.
private struct ResourceCloser: Service {
    let database: any DatabaseExecutor
    let passwords: PasswordHasher
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        do {
            try await database.close()
            try await passwords.shutdown()
        } catch {
            logger.error("closing resources failed", metadata: ["error": "\(error)"])
        }
    }
}

/// The API's date-times through ``InternetDateTime`` (OpenAPIRuntime's default uses a locale-aware formatter).
struct WireDateTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String { try InternetDateTime().encode(date) }
    func decode(_ string: String) throws -> Date { try InternetDateTime().decode(string) }
}
