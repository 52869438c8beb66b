import ArgumentParser
import BioAuthCore
import BioAuthServer
import Foundation
import Logging

/// `bioauth admin receipt-key`: the key that signs payment receipts.
struct ReceiptKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt-key",
        abstract: "The key that signs payment receipts.",
        subcommands: [RotateReceiptKeyCommand.self]
    )
}

/// `bioauth admin receipt-key rotate`.
struct RotateReceiptKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Makes a new receipt-signing key in the key file and retires the old one, which stays published.",
        discussion: """
            The old key's public half stays at GET /v1/receipt-keys with its retirement time, so every receipt it \
            signed keeps verifying. Then copy the new key file to every server and restart them one at a time; until \
            it restarts, a server signs with the old key. A server started with a retired key refuses to start. \
            docs/OPERATIONS.md has the procedure.
            """
    )

    @Option(help: "The receipt key's PEM file (default: BIOAUTH_RECEIPT_KEY, else ./bioauth-receipt-key.pem).")
    var receiptKey: String?

    @Option(help: "The database: a SQLite file or a postgres:// URL (default: BIOAUTH_DATABASE, else ./bioauth.sqlite).")
    var database: String?

    /// What the command prints.
    func execute(environment: [String: String] = ProcessInfo.processInfo.environment, clock: any WallClock = SystemClock()) async throws -> String {
        let defaults = ServerConfiguration()
        let keyPath = receiptKey ?? environment["BIOAUTH_RECEIPT_KEY"] ?? defaults.receiptKeyPath
        let location = database ?? environment["BIOAUTH_DATABASE"] ?? defaults.databasePath
        var logger = Logger(label: "bioauth-admin")
        logger.logLevel = .warning
        let executor = try await openDatabase(location, logger: logger)
        do {
            let outcome = try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: executor, clock: clock)
            try await executor.close()
            return """
                retired receipt key \(outcome.retiredKeyID) (still published, so its receipts verify)
                new receipt key     \(outcome.newKeyID) in \(keyPath)
                next: copy \(keyPath) to every server and restart them one at a time
                """
        } catch {
            try? await executor.close()
            throw error
        }
    }

    func run() async throws {
        do {
            print(try await execute())
        } catch let error as ConfigurationError {
            throw ValidationError(error.message)
        }
    }
}
