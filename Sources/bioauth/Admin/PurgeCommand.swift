import ArgumentParser
import BioAuthCore
import BioAuthServer
import Foundation

/// `bioauth admin purge [--dry-run]`: what the server's retention job does, now, from the command line.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Deletes what the retention policy says has aged out (--dry-run: only shows it).",
        discussion: """
            Expired challenges (passkey ceremonies' too), idempotency keys past their window, tokens (service tokens \
            too) that expired or whose session ended more than the token retention ago, sessions that ended (or were \
            abandoned) that long ago and have nothing left that refers to them, console sessions over that long ago, \
            audit events older than the audit retention, rate-limit windows that have passed, and webhook events whose \
            deliveries all ended long enough ago. Nothing live is deleted; accounts, devices, passkeys and payments \
            never are. Waits for nothing: when a server instance is purging, this says so and does nothing.
            """
    )

    @Flag(help: "Show what would be deleted; delete nothing.")
    var dryRun = false

    @OptionGroup var retention: RetentionOptions

    @OptionGroup var admin: AdminOptions

    /// What the command prints, from `environment`'s `BIOAUTH_*` settings where an option is missing.
    func execute(environment: [String: String] = ProcessInfo.processInfo.environment, clock: any WallClock = SystemClock()) async throws -> String {
        try await admin.withDatabase(flags: retention.flags, environment: environment) { executor, configuration in
            let purger = Retention(database: executor, configuration: configuration, clock: clock)
            if dryRun { return Self.table(try await purger.dryRun(), heading: "would delete") }
            guard let report = try await purger.purge() else { return "another instance is purging now; nothing was deleted" }
            return Self.table(report, heading: "deleted")
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
