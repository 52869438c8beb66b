import ArgumentParser
import BioAuthServer
import Foundation
import Logging

/// The database an admin command works on, and the settings it reads: found as `bioauth serve` finds them (an option,
/// then `BIOAUTH_*` variables, then the config file), so a command run beside a server reaches that server's database.
struct AdminOptions: ParsableArguments {
    @Option(help: "The database: a SQLite file or a postgres:// URL (default: BIOAUTH_DATABASE, the config file, else ./bioauth.sqlite).")
    var database: String?

    @Option(help: "A JSON file of settings, as bioauth serve reads it (default: BIOAUTH_CONFIG).")
    var config: String?

    /// Runs `body` with the open database and the configuration (`flags`, by setting key, on top of `--database`),
    /// closing the database afterwards. A refused setting or operation is a usage error naming it.
    func withDatabase<R>(
        flags: [String: String] = [:],
        environment: [String: String],
        _ body: (any DatabaseExecutor, ServerConfiguration) async throws -> R
    ) async throws -> R {
        var flags = flags
        flags["database"] = database
        let configuration = try ServerSettings.resolve(flags: flags, configFile: config, environment: environment).configuration
        var logger = Logger(label: "bioauth-admin")
        logger.logLevel = .warning
        let executor = try await openDatabase(configuration.databasePath, logger: logger)
        do {
            let result = try await body(executor, configuration)
            try await executor.close()
            return result
        } catch let error as ConfigurationError {
            try? await executor.close()
            throw ValidationError(error.message)
        } catch {
            try? await executor.close()
            throw error
        }
    }
}
