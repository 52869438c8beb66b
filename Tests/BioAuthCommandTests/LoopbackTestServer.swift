import BioAuthServer
import Foundation
import Logging

/// A BioAuth server on loopback for command tests: an in-memory database (or the SQLite file given) and receipt key,
/// bcrypt at its lowest cost, errors only in the log, and the payee `coffee-1` registered as "Coffee Shop".
enum LoopbackTestServer {
    /// Runs `body` with the server's URL and stops the server afterwards, whether `body` succeeds or throws. With a file
    /// for `database`, what the server stored can be read once this returns.
    static func with(database: String = ":memory:", _ body: (URL) async throws -> Void) async throws {
        let configuration = ServerConfiguration.forTests(database: database)
        var logger = Logger(label: "command-test")
        logger.logLevel = .error
        let server = try await LoopbackServer.start(configuration: configuration, logger: logger) { database in
            _ = try await PayeeRegistry(database: database).register(id: "coffee-1", name: "Coffee Shop")
        }
        do {
            try await body(server.url)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
