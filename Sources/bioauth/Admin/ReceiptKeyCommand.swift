import ArgumentParser
import BioAuthCore
import BioAuthServer
import Foundation

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

    @OptionGroup var admin: AdminOptions

    /// What the command prints.
    func execute(environment: [String: String] = ProcessInfo.processInfo.environment, clock: any WallClock = SystemClock()) async throws -> String {
        var flags: [String: String] = [:]
        flags["receiptKey"] = receiptKey
        return try await admin.withDatabase(flags: flags, environment: environment) { executor, configuration in
            let keyPath = configuration.receiptKeyPath
            let outcome = try await ReceiptKeyRotation.rotate(keyPath: keyPath, database: executor, clock: clock)
            return """
                retired receipt key \(outcome.retiredKeyID) (still published, so its receipts verify)
                new receipt key     \(outcome.newKeyID) in \(keyPath)
                next: copy \(keyPath) to every server and restart them one at a time
                """
        }
    }

    func run() async throws { print(try await execute()) }

}
