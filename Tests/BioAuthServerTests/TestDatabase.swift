import Foundation
import Logging
import PostgresKit
import SQLKit
import Testing

@testable import BioAuthServer

/// The storage engines a test can run on: SQLite always; PostgreSQL when `BIOAUTH_TEST_POSTGRES_URL` names a
/// server (`scripts/test-postgres.sh start` makes one; `.ci/run` does).
enum StorageBackend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static var postgresURL: String? { ProcessInfo.processInfo.environment["BIOAUTH_TEST_POSTGRES_URL"] }

    /// The engines available here.
    static var available: [StorageBackend] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    var testDescription: String { rawValue }
}

/// A fresh, private database for one test.
struct TestDatabase: Sendable {
    /// What `--database` would say: `:memory:` or a `postgres://` URL of a database made for this test.
    let location: String
    private let name: String?

    /// Makes a new database on `backend`.
    static func make(_ backend: StorageBackend) async throws -> TestDatabase {
        guard backend == .postgres else { return TestDatabase(location: ":memory:", name: nil) }
        let admin = try #require(StorageBackend.postgresURL)
        let name = "bioauth_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await Self.admin(admin) { db in try await db.raw("CREATE DATABASE \(unsafeRaw: name)").run() }
        var components = try #require(URLComponents(string: admin))
        components.path = "/" + name
        return TestDatabase(location: try #require(components.string), name: name)
    }

    /// Drops the database (PostgreSQL); nothing for SQLite in memory.
    func drop() async {
        guard let name, let admin = StorageBackend.postgresURL else { return }
        try? await Self.admin(admin) { db in try await db.raw("DROP DATABASE IF EXISTS \(unsafeRaw: name) WITH (FORCE)").run() }
    }

    /// Runs `body` on a fresh database on `backend`, opened (and migrated) as the server opens it; closes and drops it
    /// afterwards, whether `body` throws or not (a body may have closed it itself).
    static func withOpened<T>(
        _ backend: StorageBackend,
        connections: Int = 16,
        logger: Logger = Logger(label: "test-database"),
        _ body: (any DatabaseExecutor) async throws -> T
    ) async throws -> T {
        try await HangWatchdog.watch {
            HangWatchdog.enter("creating the database")
            let test = try await make(backend)
            HangWatchdog.enter("opening the database")
            let database = try await openDatabase(test.location, connections: connections, logger: logger)
            HangWatchdog.enter("in the test")
            let result: Result<T, any Error>
            do { result = .success(try await body(database)) } catch { result = .failure(error) }
            HangWatchdog.enter("closing the database")
            try? await database.close()
            HangWatchdog.enter("dropping the database")
            await test.drop()
            return try result.get()
        }
    }

    static func admin(_ url: String, _ body: @Sendable (any SQLDatabase) async throws -> Void) async throws {
        let client = PostgresClient(configuration: try PostgresDatabaseExecutor.clientConfiguration(url), backgroundLogger: Logger(label: "pg-admin"))
        let runner = client.runInBackground()
        defer { runner.cancel() }
        try await client.withConnection { connection in try await body(connection.sql(queryLogLevel: nil)) }
    }
}
