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
            never are. Waits for nothing: when a server instance is purging, this says so on standard error, does \
            nothing, and exits with status 75 (try again later), so that a scheduler notices the purge did not run.
            """
    )

    @Flag(help: "Show what would be deleted; delete nothing.")
    var dryRun = false

    @OptionGroup var retention: RetentionOptions

    @OptionGroup var admin: AdminOptions

    /// The exit status when another instance holds the purge's lease: `EX_TEMPFAIL` of `sysexits.h`, "try again later".
    static let busyExitStatus: Int32 = 75

    /// Thrown by ``execute(environment:clock:)`` when another instance is purging: nothing was deleted.
    struct Busy: Error, CustomStringConvertible {
        var description: String { "another instance is purging now; nothing was deleted" }
    }

    /// What the command prints, from `environment`'s `BIOAUTH_*` settings where an option is missing; ``Busy`` when
    /// another instance is purging.
    func execute(environment: [String: String] = ProcessInfo.processInfo.environment, clock: any WallClock = SystemClock()) async throws -> String {
        try await admin.withDatabase(flags: retention.flags, environment: environment) { executor, configuration in
            let purger = Retention(database: executor, configuration: configuration, clock: clock)
            if dryRun { return Self.table(try await purger.dryRun(), heading: "would delete") }
            guard let report = try await purger.purge() else { throw Busy() }
            return Self.table(report, heading: "deleted")
        }
    }

    func run() async throws {
        do {
            print(try await execute())
        } catch let busy as Busy {
            FileHandle.standardError.write(Data("bioauth admin purge: \(busy)\n".utf8))
            throw ExitCode(Self.busyExitStatus)
        }
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
