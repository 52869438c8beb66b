import ArgumentParser
import BioAuthCore
import BioAuthServer
import Foundation
import Logging

/// `bioauth admin purge [--dry-run]`: what the server's retention job does, now, from the command line.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Deletes what the retention policy says has aged out (--dry-run: only shows it).",
        discussion: """
            Expired challenges, idempotency keys past their window, tokens that expired or whose session ended more \
            than the token retention ago, audit events older than the audit retention, and rate-limit windows that \
            have passed. Nothing live is deleted; accounts, devices, sessions and payments never are. Waits for nothing: \
            when a server instance is purging, this says so and does nothing.
            """
    )

    @Option(help: "The database: a SQLite file or a postgres:// URL (default: BIOAUTH_DATABASE, else ./bioauth.sqlite).")
    var database: String?

    @Flag(help: "Show what would be deleted; delete nothing.")
    var dryRun = false

    @OptionGroup var retention: RetentionOptions

    @Option(help: "A JSON file of settings, as bioauth serve reads it (default: BIOAUTH_CONFIG).")
    var config: String?

    /// What the command prints, from `environment`'s `BIOAUTH_*` settings where an option is missing.
    func execute(environment: [String: String] = ProcessInfo.processInfo.environment, clock: any WallClock = SystemClock()) async throws -> String {
        var flags = retention.flags
        flags["database"] = database
        let configuration = try ServerSettings.resolve(flags: flags, configFile: config, environment: environment).configuration
        var logger = Logger(label: "bioauth-admin")
        logger.logLevel = .warning
        let executor = try await openDatabase(configuration.databasePath, logger: logger)
        do {
            let purger = Retention(database: executor, configuration: configuration, clock: clock)
            let output: String
            if dryRun {
                output = Self.table(try await purger.dryRun(), heading: "would delete")
            } else if let report = try await purger.purge() {
                output = Self.table(report, heading: "deleted")
            } else {
                output = "another instance is purging now; nothing was deleted"
            }
            try await executor.close()
            return output
        } catch {
            try? await executor.close()
            throw error
        }
    }

    func run() async throws {
        print(try await execute())
    }

    /// One line per kind, then the total.
    static func table(_ report: Retention.Report, heading: String) -> String {
        var lines = ["\(heading):"]
        for kind in Retention.Kind.allCases {
            lines.append("  \(kind.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)) \(report.counts[kind] ?? 0)")
        }
        lines.append("  \("total".padding(toLength: 18, withPad: " ", startingAt: 0)) \(report.total)")
        return lines.joined(separator: "\n")
    }
}
