import ArgumentParser
import BioAuthServer
import Foundation

/// `bioauth admin payee`: the payees the bank registered, whose registered names payment prompts show.
struct PayeeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payee",
        abstract: "Registered payees: a payment can only be to one, and its prompt shows the registered name.",
        subcommands: [Register.self, List.self]
    )

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Registers a payee, or changes a registered one's name or verification state (as POST /v1/service/payees does)."
        )
        @Argument(help: "The payee id: 1-64 of A-Z a-z 0-9 . _ : -") var payeeID: String
        @Option(help: "The name prompts show (checked as every such name is: NFC, no invisible characters, one script).") var name: String
        @Flag(help: "Record the payee as not verified by the bank.") var unverified = false
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let (payee, created) = try await admin.withDatabase(environment: environment) { executor, _ in
                try await PayeeRegistry(database: executor).register(id: payeeID, name: name, verification: unverified ? .unverified : .verified)
            }
            return "\(payee.id): \(created ? "registered" : "updated") as \"\(payee.name)\" (\(payee.verification.rawValue))"
        }
        func run() async throws { print(try await execute()) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the registered payees.")
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let payees = try await admin.withDatabase(environment: environment) { executor, _ in try await PayeeRegistry(database: executor).list() }
            guard !payees.isEmpty else { return "no registered payees" }
            return payees.map { "\($0.id)  \"\($0.name)\"  \($0.verification.rawValue)  by \($0.registeredBy)" }.joined(separator: "\n")
        }
        func run() async throws { print(try await execute()) }
    }
}
