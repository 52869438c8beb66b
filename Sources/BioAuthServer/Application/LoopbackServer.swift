import BioAuthCore
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The BioAuth server running in this process on 127.0.0.1 and a free port, for demos and integration
/// tests (`bioauth demo` uses it). Stop it when done.
///
/// ```swift
/// import BioAuthClient
/// import BioAuthServer
/// import Logging
/// // Partial: assumes configuration: ServerConfiguration; logger: Logger
///
/// let server = try await LoopbackServer.start(configuration: configuration, logger: logger)
/// let api = BioAuthAPI(serverURL: server.url)
/// // … the demo's or the test's requests through api …
/// await server.stop()
/// ```
public final class LoopbackServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let url: URL
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(url: URL, group: ServiceGroup, task: Task<Void, any Error>) {
        self.url = url
        self.group = group
        self.task = task
    }

    /// Starts the server; `configuration`'s host and port are replaced by loopback and `port` (0: a free one). `prepare` runs on the
    /// migrated database before the server listens: the place to register payees or make a service client (with
    /// ``PayeeRegistry`` and ``ServiceClients``) on a database only this server can reach, such as `:memory:`.
    public static func start(
        configuration: ServerConfiguration,
        port: Int = 0,
        clock: any WallClock = SystemClock(),
        random: any RandomSource = SystemRandomSource(),
        logger: Logger,
        prepare: (any DatabaseExecutor) async throws -> Void = { _ in }
    ) async throws -> LoopbackServer {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = port
        try configuration.validate()
        let database = try await openDatabase(configuration.databasePath, connections: configuration.databaseConnections, logger: logger)
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let app: any ApplicationProtocol
        do {
            try await prepare(database)
            app = try await BioAuthServerApplication.build(
                configuration: configuration,
                database: database,
                clock: clock,
                random: random,
                logger: logger,
                onServerRunning: { channel in
                    continuation.yield(channel.localAddress?.port ?? 0)
                    continuation.finish()
                }
            ).app
        } catch {
            try? await database.close()
            throw error
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        var port = 0
        for await bound in stream {
            port = bound
            break
        }
        guard port > 0, let url = URL(string: "http://127.0.0.1:\(port)") else {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw ConfigurationError(message: "the server did not start")
        }
        return LoopbackServer(url: url, group: group, task: task)
    }

    /// Shuts the server down and waits until it has closed its database.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
