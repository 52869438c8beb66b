import Logging
import PostgresKit
import SQLKit

/// What a PostgreSQL database has done so far, from its statistics views: `bioauth bench` reads it before and after its
/// measured phase and reports the difference per operation.
///
/// `pg_stat_database` counts transactions for the whole database, whoever ran them; the counts reach it when a backend
/// ends a transaction and flushes its statistics (at most about once a second while busy), so a ten-second window is
/// accurate to about a second's worth. Statements come from `pg_stat_statements` (every statement but `BEGIN` and
/// `COMMIT`, which it does not count once they run as prepared statements), which needs
/// `shared_preload_libraries = 'pg_stat_statements'` and `CREATE EXTENSION pg_stat_statements` in the database read
/// (`scripts/test-postgres.sh` does both); without it ``statements`` is `nil`.
public struct PostgresActivity: Sendable, Equatable {
    /// Transactions committed (`xact_commit`).
    public var commits: Int64
    /// Transactions rolled back (`xact_rollback`): a serialization failure retried is one.
    public var rollbacks: Int64
    /// Statements executed in this database (`pg_stat_statements`' calls), or `nil` without the extension.
    public var statements: Int64?

    /// The counts now of the database `url` names (a `postgres://` URL, as `--database` takes it).
    public static func read(url: String) async throws -> PostgresActivity {
        var configuration = try PostgresDatabaseExecutor.clientConfiguration(url)
        configuration.options.maximumConnections = 1
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "bioauth.bench.postgres"))
        let runner = client.runInBackground()
        defer { runner.cancel() }
        return try await client.withConnection { connection in
            let db = connection.sql(queryLogLevel: nil)
            // A fresh snapshot of the statistics, not the one this backend cached.
            try await db.raw("SELECT pg_stat_clear_snapshot()").run()
            guard
                let row = try await db.raw("SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()")
                    .first()
            else { throw ConfigurationError(message: "pg_stat_database has no row for this database") }
            var activity = PostgresActivity(
                commits: try row.decode(column: "xact_commit", as: Int64.self),
                rollbacks: try row.decode(column: "xact_rollback", as: Int64.self),
                statements: nil
            )
            if try await db.raw("SELECT 1 AS present FROM pg_extension WHERE extname = 'pg_stat_statements'").first() != nil {
                let calls = try await db.raw(
                    """
                    SELECT COALESCE(SUM(calls), 0)::BIGINT AS calls FROM pg_stat_statements \
                    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """
                ).first()
                activity.statements = try calls?.decode(column: "calls", as: Int64.self)
            }
            return activity
        }
    }

    /// What happened between `earlier` and this reading.
    public func since(_ earlier: PostgresActivity) -> PostgresActivity {
        PostgresActivity(
            commits: commits - earlier.commits,
            rollbacks: rollbacks - earlier.rollbacks,
            statements: statements.flatMap { now in earlier.statements.map { now - $0 } }
        )
    }
}
