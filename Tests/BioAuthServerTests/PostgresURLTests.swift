import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresKit
import SQLKit
import TestTools
import Testing

@testable import BioAuthServer

/// What `--database postgres://…` accepts: a host and port over TCP, or, as libpq reads such a URL, the directory of a
/// Unix socket in a `host` query parameter.
@Suite("PostgreSQL database URLs")
struct PostgresURLTests {
    @Test("a host over TCP, or a socket directory in host= with the port from the URL, port= or 5432")
    func forms() throws {
        let tcp = try PostgresDatabaseExecutor.clientConfiguration("postgres://app:secret@db.internal:6432/bioauth?sslmode=require")
        #expect(tcp.host == "db.internal" && tcp.port == 6432 && tcp.unixSocketPath == nil)
        #expect(tcp.username == "app" && tcp.password == "secret" && tcp.database == "bioauth")

        let socket = try PostgresDatabaseExecutor.clientConfiguration("postgres://app:secret@/bioauth?host=/var/run/postgresql")
        #expect(socket.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432" && socket.host == nil)
        #expect(socket.username == "app" && socket.password == "secret" && socket.database == "bioauth")
        let withPort = try PostgresDatabaseExecutor.clientConfiguration("postgresql:///bioauth?host=/tmp/pg/&port=54329&sslmode=disable")
        #expect(withPort.unixSocketPath == "/tmp/pg/.s.PGSQL.54329" && withPort.username == "postgres")
        let portInURL = try PostgresDatabaseExecutor.clientConfiguration("postgres://app@:6000/bioauth?host=/sockets")
        #expect(portInURL.unixSocketPath == "/sockets/.s.PGSQL.6000")
    }

    @Test("refused with a message that says what is wrong, and never the password")
    func refusals() {
        let cases: [(String, String)] = [
            ("postgres:///bioauth", "postgres://user:password@host:port/database"),
            ("mysql://app:secret@db/bioauth", "postgres://user:password@host:port/database"),
            ("postgres://app:secret@db.internal/bioauth?host=/var/run/postgresql", "directory of a Unix socket"),
            ("postgres://app:secret@/bioauth?host=db.internal", "directory of a Unix socket"),
            ("postgres://app:secret@/bioauth?host=/var/run/postgresql&sslmode=require", "no TLS"),
            ("postgres://app:secret@/bioauth?host=/var/run/postgresql&port=99999", "port must be"),
            ("postgres://app:secret@db.internal/bioauth?sslmode=verify-full", "sslmode must be"),
        ]
        for (url, expected) in cases {
            do {
                _ = try PostgresDatabaseExecutor.clientConfiguration(url)
                Issue.record("accepted \(url)")
            } catch {
                let message = "\(error)"
                #expect(message.contains(expected) && !message.contains("secret"), "\(url): \(message)")
            }
        }
    }

    @Test(
        "a server's Unix socket: the schema is made and units of work run, with no TCP connection",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func overUnixSocket() async throws {
        let test = try await TestDatabase.make(.postgres)
        // Where the test server puts its socket, asked over TCP.
        let (directories, port) = try await Self.socketDirectoryAndPort(of: try #require(StorageBackend.postgresURL))
        let directory = try #require(directories.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("/") })
        var components = try #require(URLComponents(string: test.location))
        components.host = nil
        components.port = nil
        components.queryItems = [URLQueryItem(name: "host", value: directory), URLQueryItem(name: "port", value: port)]
        let url = try #require(components.string)
        #expect(url.contains("@/bioauth_test_"), "\(url)")

        let database = try await openDatabase(url, connections: 2, logger: Logger(label: "socket"))
        let (tables, client) = try await database.transaction { db in
            let tables = try await db.raw("SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_name = 'sessions'").first()?
                .decode(column: "n", as: Int.self)
            // NULL over a Unix socket; an address over TCP.
            let client = try await db.raw("SELECT CAST(inet_client_addr() AS TEXT) AS address").first()?.decode(column: "address", as: String?.self)
            return (tables, client)
        }
        #expect(tables == 1)
        #expect(client == .some(nil), "connected over TCP from \(String(describing: client))")
        try await database.close()
        await test.drop()
    }

    static func socketDirectoryAndPort(of url: String) async throws -> (String, String) {
        let found = NIOLockedValueBox<(String, String)?>(nil)
        try await TestDatabase.admin(url) { db in
            let directories = try await db.raw("SHOW unix_socket_directories").first()?.decode(column: "unix_socket_directories", as: String.self)
            let port = try await db.raw("SHOW port").first()?.decode(column: "port", as: String.self)
            found.withLockedValue { $0 = directories.flatMap { directories in port.map { (directories, $0) } } }
        }
        return try #require(found.withLockedValue { $0 })
    }
}
