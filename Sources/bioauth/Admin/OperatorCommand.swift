import ArgumentParser
import BioAuthServer
import Foundation

/// `bioauth admin operator`: the bank's support staff, who sign in with a password and a TOTP code.
struct OperatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator",
        abstract: "Operators: the bank's support staff (roles viewer, support, admin), separate from customers.",
        subcommands: [Create.self, List.self, Disable.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Makes an operator; the password (at least 12 characters) is read from standard input, one line.",
            discussion: """
                The TOTP second factor is enrolled at the operator's first sign-in. Example:
                  printf '%s\\n' "$PASSWORD" | bioauth admin operator create alice --role admin
                """
        )
        @Argument(help: "The sign-in name: 1-64 of A-Z a-z 0-9 . _ -") var name: String
        @Option(help: "viewer (read only), support (also the support actions) or admin (also operators and the bank's backend).")
        var role: String
        @OptionGroup var admin: AdminOptions

        func validate() throws {
            guard OperatorRole(rawValue: role) != nil else { throw ValidationError("--role must be viewer, support or admin") }
        }

        func execute(password: String?, environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            guard let password, !password.isEmpty else { throw ValidationError("give the password on standard input") }
            let made = try await admin.withDatabase(environment: environment) { executor, configuration in
                do {
                    return try await Operators(database: executor, bcryptCost: configuration.bcryptCost)
                        .create(name: name, role: OperatorRole(rawValue: role) ?? .viewer, password: password)
                } catch let error as OperatorError {
                    throw ValidationError(error.description)
                }
            }
            return "\(made.id): operator \(made.name) (\(made.role.rawValue)); the TOTP second factor is enrolled at the first sign-in"
        }

        func run() async throws { print(try await execute(password: readLine(strippingNewline: true))) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the operators (never a password or a TOTP secret).")
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let operators = try await admin.withDatabase(environment: environment) { executor, _ in try await Operators(database: executor).list() }
            guard !operators.isEmpty else { return "no operators" }
            return operators.map { item in
                let state = item.disabledAt != nil ? "disabled" : item.totpEnrolled ? "active" : "TOTP not enrolled"
                return "\(item.id)  \(item.name)  \(item.role.rawValue)  \(state)"
            }.joined(separator: "\n")
        }
        func run() async throws { print(try await execute()) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disables an operator: sign-in is refused from now on.")
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withDatabase(environment: environment) { executor, _ in
                do {
                    try await Operators(database: executor).disable(name: name)
                } catch let error as OperatorError {
                    throw ValidationError(error.description)
                }
            }
            return "\(name): disabled"
        }
        func run() async throws { print(try await execute()) }
    }
}
