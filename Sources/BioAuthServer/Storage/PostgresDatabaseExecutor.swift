import Foundation
import Logging
import PostgresKit
import SQLKit

/// PostgreSQL through a connection pool, for deployments where several server instances share one database.
///
/// Every unit of work runs as a `SERIALIZABLE` transaction (but the few hot ones that ask for `READ COMMITTED`, and those
/// whose statements each commit on their own, such as the sign-in challenge and an access token's lookup: see
/// ``TransactionIsolation``) and is retried, with
/// backoff, when PostgreSQL reports a serialization failure or a deadlock, or the unit finds a concurrent one got there
/// first, so that the outcome is the one some serial order of the requests would give —
/// exactly what the embedded SQLite executor guarantees by running one unit of work at a time. Retries go on for up to
/// ten seconds (a client sees latency, not an error, because the load is high); a unit of work that still cannot
/// commit then answers `not_ready` (503, retry after a second), never `internal_error`. The checks that must hold
/// across instances (a challenge used once, a payment authorized once, counters that only grow) are also written as
/// conditional updates whose result is checked, so they hold at any isolation. Counters many requests share (the rate
/// limits) are updated ``standalone(_:)``, outside these transactions, so they do not make them conflict.
///
/// Each connection is opened with `enable_seqscan = off`: index scans take fine-grained predicate locks, while a
/// sequential scan of a small table locks all of it and makes every concurrent transaction conflict. Setting it once
/// per connection saves a statement per unit of work. `jit` is off too: a statement that must read a whole table (a
/// retention batch) is costed past `jit_above_cost` by that setting and was compiled each time (80 ms), for statements that
/// run in milliseconds. Units of work see the connection as a
/// `PreparingPostgresDatabase`: the hot statements (`FixedSQL`), `BEGIN` and `COMMIT` run as prepared statements.
public final class PostgresDatabaseExecutor: DatabaseExecutor {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger
    /// The executor over the background connections; `nil` for that executor itself.
    private let reserved: PostgresDatabaseExecutor?
    /// Ends the units of work a closed connection left waiting.
    let closedConnections = ClosedConnectionGuard()
    /// How long a unit of work is retried after serialization failures before it is given up on.
    static let retryBudget: Duration = .seconds(10)
    /// The connections each instance keeps apart from its pool for ``background`` work (the webhook dispatcher's), opened
    /// when first needed: an instance opens at most its pool's connections plus these.
    public static let backgroundConnections = 2

    private init(client: PostgresClient, runner: Task<Void, Never>, logger: Logger, reserved: PostgresDatabaseExecutor?) {
        self.client = client
        self.runner = runner
        self.logger = logger
        self.reserved = reserved
    }

    public var dialect: DatabaseDialect { .postgres }

    /// Units of work on ``backgroundConnections`` connections of their own, beside the pool's.
    public var background: any DatabaseExecutor { reserved ?? self }

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`, or over a Unix
    /// socket `postgres://user:password@/database?host=/socket/directory&port=5432`, as libpq reads such a URL) and
    /// brings the schema up to date. Several instances may start at once: migrations take a lock.
    public static func open(url: String, maximumConnections: Int = 16, logger: Logger) async throws -> PostgresDatabaseExecutor {
        var configuration = try clientConfiguration(url)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.additionalStartupParameters = [("enable_seqscan", "off"), ("jit", "off")]
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = client.runInBackground()
        configuration.options.maximumConnections = backgroundConnections
        let backgroundClient = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let reserved = PostgresDatabaseExecutor(client: backgroundClient, runner: backgroundClient.runInBackground(), logger: logger, reserved: nil)
        let executor = PostgresDatabaseExecutor(client: client, runner: runner, logger: logger, reserved: reserved)
        do {
            try await Migrations.run(on: executor, logger: logger)
        } catch {
            try? await executor.close()
            throw error
        }
        return executor
    }

    /// The client configuration for a `postgres://` URL. The password never appears in an error.
    ///
    /// As libpq reads such a URL, a `host` query parameter that is a path names the directory of the server's Unix socket
    /// (`.s.PGSQL.<port>` in it; the port from the URL or a `port` query parameter, 5432 by default), with the URL's host
    /// left empty: a server on the same machine, or a local proxy (Cloud SQL Auth Proxy, PgBouncer), without TCP. A socket
    /// has no TLS: `sslmode=require` with one is refused.
    static func clientConfiguration(_ url: String) throws -> PostgresClient.Configuration {
        let shape =
            "the database URL must be postgres://user:password@host:port/database, or postgres://user:password@/database?host=/socket/directory"
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw ConfigurationError(message: shape)
        }
        let query = components.queryItems ?? []
        func parameter(_ name: String) -> String? { query.first(where: { $0.name == name })?.value }
        let database = String(components.path.dropFirst())
        let mode = parameter("sslmode") ?? "prefer"
        guard ["disable", "prefer", "require"].contains(mode) else {
            throw ConfigurationError(message: "sslmode must be disable, prefer or require, not \(mode)")
        }
        if let directory = parameter("host") {
            guard directory.hasPrefix("/"), (components.host ?? "").isEmpty else {
                throw ConfigurationError(message: "host= must be the directory of a Unix socket (a path), with no host before the database: \(shape)")
            }
            guard mode != "require" else { throw ConfigurationError(message: "sslmode=require cannot apply to a Unix socket, which has no TLS") }
            var port = components.port ?? 5432
            if let value = parameter("port") {
                guard let number = Int(value), (1...65535).contains(number) else {
                    throw ConfigurationError(message: "port must be a number from 1 to 65535")
                }
                port = number
            }
            return PostgresClient.Configuration(
                unixSocketPath: (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/.s.PGSQL.\(port)",
                username: components.user ?? "postgres",
                password: components.password,
                database: database.isEmpty ? nil : database
            )
        }
        guard let host = components.host, !host.isEmpty else { throw ConfigurationError(message: shape) }
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "require": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: components.user ?? "postgres",
            password: components.password,
            database: database.isEmpty ? nil : database,
            tls: tls
        )
    }

    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await transaction(isolation: .serializable, body)
    }

    public func transaction<R: Sendable>(
        isolation: TransactionIsolation,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        let begin: FixedSQL
        switch isolation {
        case .serializable: begin = Self.beginSerializable
        case .readCommitted: begin = Self.beginReadCommitted
        case .eachStatement: return try await standalone(body)
        }
        return try await CommittedLog.afterCommit(of: body) { body in
            let deadline = ContinuousClock.now + Self.retryBudget
            var attempt = 1
            while true {
                do {
                    return try await client.withConnection { connection in
                        try await self.closedConnections.run(on: connection) {
                            try await Self.inTransaction(PreparingPostgresDatabase(connection), begin: begin, body)
                        }
                    }
                } catch let error where Self.isRetryable(error) {
                    guard ContinuousClock.now < deadline else {
                        logger.warning("unit of work given up after \(attempt) serialization failures", metadata: ["attempts": "\(attempt)"])
                        throw APIError.databaseTooBusy
                    }
                    attempt += 1
                    UnitOfWorkEvents.current?.retried()
                    // Exponential backoff with full jitter, capped at 100 ms.
                    try await Task.sleep(for: .microseconds(Int.random(in: 100...min(100_000, 500 << min(attempt, 10)))))
                }
            }
        }
    }

    public func standalone<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await client.withConnection { connection in
            try await self.closedConnections.run(on: connection) { try await body(PreparingPostgresDatabase(connection)) }
        }
    }

    /// Runs `body` between `begin` and `COMMIT` on `database`, rolling back when it throws. These are prepared statements
    /// too: no text parsed for them on each unit of work.
    private static func inTransaction<R: Sendable>(
        _ database: any SQLDatabase,
        begin: FixedSQL,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await database.run(begin())
        do {
            let result = try await body(database)
            try await database.run(commit())
            return result
        } catch {
            try? await database.run(rollback())
            throw error
        }
    }

    private static let beginSerializable = FixedSQL("BEGIN ISOLATION LEVEL SERIALIZABLE")
    private static let beginReadCommitted = FixedSQL("BEGIN ISOLATION LEVEL READ COMMITTED")
    private static let commit = FixedSQL("COMMIT")
    private static let rollback = FixedSQL("ROLLBACK")

    /// Serialization failure (40001) or deadlock (40P01), or a unit of work that found a concurrent one got there first
    /// (``ConcurrentUnitConflict``): the transaction was rolled back and may be retried.
    static func isRetryable(_ error: any Error) -> Bool {
        if error is ConcurrentUnitConflict { return true }
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }

    public func close() async throws {
        runner.cancel()
        try await reserved?.close()
    }
}

extension PostgresClient {
    /// Runs the client (``PostgresClient/run()``) in a task of its own, which closes the client when cancelled.
    ///
    /// The task starts at once, on the caller's thread, and `run()` marks the client running before it first
    /// suspends, so a query right after this call does not make PostgresNIO warn that `run()` was never called. With
    /// a plain `Task` the first migration often came first, and every start on PostgreSQL logged that warning.
    func runInBackground() -> Task<Void, Never> {
        Task.immediate { await self.run() }
    }
}
