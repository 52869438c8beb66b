import Foundation
import Logging
import SQLKit

/// Runs units of work against the SQL database through SQLKit, in SQL every supported dialect accepts.
///
/// Implementations guarantee that a transaction's statements are not interleaved with another unit of
/// work's, and that a unit of work that throws leaves nothing behind.
public protocol DatabaseExecutor: Sendable {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws. As if the units of work ran
    /// one at a time (`SERIALIZABLE`). `body` escapes: on PostgreSQL it runs in a task of its own, which the caller stops
    /// waiting for if its connection is lost (`ClosedConnectionGuard`).
    func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Runs `body` in a transaction at `isolation`. Only for units of work whose every guarantee holds at that level
    /// (see ``TransactionIsolation``); engines that run one unit of work at a time (SQLite) give more.
    func transaction<R: Sendable>(isolation: TransactionIsolation, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Runs `body`, which is one statement atomic on its own (a counter's `INSERT … ON CONFLICT DO UPDATE`), outside any
    /// longer transaction: on PostgreSQL in autocommit at `READ COMMITTED`, so requests that update the same row queue
    /// on its lock for the statement's duration instead of failing to serialize; on SQLite, a unit of work like any
    /// other. Nothing `body` reads may decide another write: what needs that belongs in ``transaction(_:)``.
    func standalone<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Closes the database. Nothing may use it afterwards.
    func close() async throws
    /// The SQL engine, for the few statements that differ (locks).
    var dialect: DatabaseDialect { get }
    /// Where the webhook dispatcher runs its units of work: on PostgreSQL, connections of their own
    /// (``PostgresDatabaseExecutor/backgroundConnections``), so that its claims and records do not wait behind every request
    /// queued for the pool when the server is saturated, and its deliveries keep going out; elsewhere this executor.
    var background: any DatabaseExecutor { get }
}

/// Thrown by a unit of work at `READ COMMITTED` that finds a concurrent unit got there first (a conditional insert that
/// inserted nothing because the other's row committed meanwhile). The executor rolls the unit back and runs it again, as
/// after a serialization failure; the next run sees the other's row. Never thrown on SQLite, which runs one unit of
/// work at a time.
struct ConcurrentUnitConflict: Error {}

/// How much a unit of work is kept apart from those running beside it, on engines that run several at once.
public enum TransactionIsolation: Sendable {
    /// As if every unit of work ran alone, one after another. The default.
    case serializable
    /// Each statement sees what was committed when it started; rows it updates are locked until the unit ends. For the
    /// hot units of work (biometric sign-in, payment authorization, a customer's payment creation, a payment challenge
    /// that must refuse) whose guarantees are all conditional updates or inserts that check their result, or row locks taken in
    /// one order: the challenge's row (its use), then the device's (its counter update, which also refuses a revoked
    /// device), then the payment's or the account's (`AccountsTable.guardSessions(account:engine:)`, which every unit that
    /// starts or ends sessions takes). docs/DEPLOYMENT.md lists them. The webhook dispatcher's claims and records too: each
    /// moves a delivery only on a condition its own update checks (still due; still leased to this instance). And the
    /// retention purge's batches, which delete only rows their condition still selects as each is deleted.
    case readCommitted
    /// Each statement commits on its own, as it runs (on PostgreSQL no `BEGIN` and `COMMIT`, two round trips fewer), and
    /// sees what was committed when it started. For units of work with what `readCommitted` gives minus atomicity: their
    /// reads lock nothing and each write stands alone, so that a unit that stops halfway leaves nothing wrong (the
    /// sign-in challenge: the rate-limit hits counted, an audit of a refused request or one challenge stored, in that order;
    /// a payment challenge for a payment that can be authorized; an access token's lookup, which is one read).
    case eachStatement
}

extension DatabaseExecutor {
    /// This executor: engines with no connections of their own for background work.
    public var background: any DatabaseExecutor { self }

    /// `SERIALIZABLE` or better whatever is asked: engines that run one unit of work at a time.
    public func transaction<R: Sendable>(
        isolation: TransactionIsolation,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await transaction(body)
    }

    /// A unit of work like any other, where the engine needs nothing else (SQLite runs one unit of work at a time).
    public func standalone<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await transaction(body)
    }
}

extension SQLDatabase {
    /// Whether the database answers a query (readiness).
    func answers() async throws -> Bool {
        try await raw("SELECT 1 AS one").first() != nil
    }
}

/// The SQL engines BioAuth runs on.
public enum DatabaseDialect: String, Sendable {
    /// Embedded SQLite, one process.
    case sqlite
    /// PostgreSQL, shared by several server instances.
    case postgres

    /// The engine a database location (`--database`) names: ``postgres`` for a `postgres://` or `postgresql://` URL,
    /// else ``sqlite`` (a file path or `:memory:`), as ``openDatabase(_:connections:logger:)`` reads it.
    public init(location: String) {
        self = location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") ? .postgres : .sqlite
    }
}

/// Opens the database `location` names: a `postgres://` or `postgresql://` URL (with a pool of at most `connections`),
/// else a SQLite file path (or `:memory:`). The schema is brought up to date.
public func openDatabase(_ location: String, connections: Int = 16, logger: Logger) async throws -> any DatabaseExecutor {
    if DatabaseDialect(location: location) == .postgres {
        return try await PostgresDatabaseExecutor.open(url: location, maximumConnections: connections, logger: logger)
    }
    return try await SQLiteDatabaseExecutor.open(path: location, logger: logger)
}

/// `location` fit for logs: a `postgres://` URL's password replaced by `***`.
public func redactedDatabaseLocation(_ location: String) -> String {
    guard DatabaseDialect(location: location) == .postgres,
        var components = URLComponents(string: location), components.password != nil
    else { return location }
    components.password = "***"
    return components.string ?? "postgres://***"
}
