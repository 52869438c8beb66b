import Logging
import SQLKit
import SQLiteKit

/// SQLite through one connection, for the embedded default.
///
/// SQLite has one writer at a time anyway; one connection behind a lock makes every unit of work exclusive,
/// so no request can see or interleave with another's open transaction. The file is opened with WAL and
/// foreign keys on; `":memory:"` gives a private in-memory database (tests).
public final class SQLiteDatabaseExecutor: DatabaseExecutor {
    private let connection: SQLiteConnection
    private let database: any SQLDatabase
    private let lock = AsyncLock()

    private init(connection: SQLiteConnection) {
        self.connection = connection
        self.database = connection.sql(queryLogLevel: nil)
    }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public static func open(path: String, logger: Logger) async throws -> SQLiteDatabaseExecutor {
        let storage: SQLiteConnection.Storage = path == ":memory:" ? .memory : .file(path: path)
        let connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        let executor = SQLiteDatabaseExecutor(connection: connection)
        do {
            try await executor.database.raw("PRAGMA foreign_keys = ON").run()
            if path != ":memory:" {
                try await executor.database.raw("PRAGMA journal_mode = WAL").run()
                try await executor.database.raw("PRAGMA synchronous = FULL").run()
                try await executor.database.raw("PRAGMA busy_timeout = 5000").run()
            }
            try await Migrations.run(on: executor, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        return executor
    }

    public var dialect: DatabaseDialect { .sqlite }

    public func transaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let database = self.database
        return try await lock.withLock { try await inTransaction(database, body) }
    }

    public func close() async throws {
        try await lock.withLock { try await connection.close() }
    }
}
