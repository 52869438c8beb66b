import ArgumentParser
import BioAuthServer
import Foundation

/// `bioauth admin operator`: the bank's support staff, who sign in with a password and a TOTP code.
struct OperatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator",
        abstract: "Operators: the bank's support staff (roles viewer, support, admin), separate from customers.",
        subcommands: [Create.self, List.self, Disable.self, Enable.self, SetRole.self, ResetPassword.self, ResetTOTP.self]
    )

    /// The admin who acts and why: required by every change of another operator, and written into its audit event.
    struct AdminAccountability: ParsableArguments {
        @Option(help: "The admin taking the action (an enabled operator with the admin role).") var `operator`: String
        @Option(help: "Why: 1-500 characters, recorded in the audit log.") var reason: String
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Makes an operator; the password (at least 12 characters) is read from standard input, one line.",
            discussion: """
                At their first sign-in the operator chooses their own password, then enrolls the TOTP second factor. Example:
                  printf '%s\\n' "$PASSWORD" | bioauth admin operator create alice --role admin
                With --own-password, the person typing the password is the operator (the first admin, say): they are not
                asked to choose another.
                """
        )
        @Argument(help: "The sign-in name: 1-64 of A-Z a-z 0-9 . _ -") var name: String
        @Option(help: "viewer (read only), support (also the support actions) or admin (also operators and the bank's backend).")
        var role: String
        @Flag(help: "The password typed is the operator's own: do not make them choose another at their first sign-in.")
        var ownPassword = false
        @OptionGroup var admin: AdminOptions

        func validate() throws {
            guard OperatorRole(rawValue: role) != nil else { throw ValidationError("--role must be viewer, support or admin") }
        }

        func execute(password: String?, environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            guard let password, !password.isEmpty else { throw ValidationError("give the password on standard input") }
            let made = try await admin.withDatabase(environment: environment) { executor, configuration in
                do {
                    return try await Operators(database: executor, bcryptCost: configuration.bcryptCost)
                        .create(name: name, role: OperatorRole(rawValue: role) ?? .viewer, password: password, mustChangePassword: !ownPassword)
                } catch let error as OperatorError {
                    throw ValidationError(error.description)
                }
            }
            let first = ownPassword ? "the TOTP second factor is enrolled" : "they choose their own password and enroll the TOTP second factor"
            return "\(made.id): operator \(made.name) (\(made.role.rawValue)); at the first sign-in \(first)"
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
                let state =
                    item.disabledAt != nil
                    ? "disabled" : item.mustChangePassword ? "password not yet chosen" : item.totpEnrolled ? "active" : "TOTP not enrolled"
                return "\(item.id)  \(item.name)  \(item.role.rawValue)  \(state)"
            }.joined(separator: "\n")
        }
        func run() async throws { print(try await execute()) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disables an operator: sign-in is refused from now on; the name stays theirs (audited with the admin and the reason)."
        )
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var who: AdminAccountability
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withDesk(environment: environment) { desk in
                try await desk.disableOperator(name: name, reason: who.reason, by: try await desk.enabledOperator(named: who.operator))
            }
            return "\(name): disabled"
        }
        func run() async throws { print(try await execute()) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enables a disabled operator again (audited with the admin and the reason).")
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var who: AdminAccountability
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withDesk(environment: environment) { desk in
                try await desk.enableOperator(name: name, reason: who.reason, by: try await desk.enabledOperator(named: who.operator))
            }
            return "\(name): enabled"
        }
        func run() async throws { print(try await execute()) }
    }

    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-role",
            abstract: "Gives an operator another role, from their next request (audited with the admin and the reason)."
        )
        @Argument(help: "The operator's name.") var name: String
        @Option(help: "viewer, support or admin.") var role: String
        @OptionGroup var who: AdminAccountability
        @OptionGroup var admin: AdminOptions

        func validate() throws {
            guard OperatorRole(rawValue: role) != nil else { throw ValidationError("--role must be viewer, support or admin") }
        }

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withDesk(environment: environment) { desk in
                try await desk.changeOperatorRole(
                    name: name,
                    to: OperatorRole(rawValue: role) ?? .viewer,
                    reason: who.reason,
                    by: try await desk.enabledOperator(named: who.operator)
                )
            }
            return "\(name): \(role)"
        }
        func run() async throws { print(try await execute()) }
    }

    struct ResetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-password",
            abstract: "Gives an operator a temporary password (standard input, one line); they choose their own at their next sign-in.",
            discussion: """
                Their console sessions end. They sign in with the temporary password and their code, then must choose a new
                password before anything else. Example:
                  printf '%s\\n' "$TEMPORARY" | bioauth admin operator reset-password mei --operator ada --reason "Forgot it (ticket 4411)"
                """
        )
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var who: AdminAccountability
        @OptionGroup var admin: AdminOptions

        func execute(password: String?, environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            guard let password, !password.isEmpty else { throw ValidationError("give the temporary password on standard input") }
            try await admin.withDesk(environment: environment) { desk in
                try await desk.resetOperatorPassword(
                    name: name,
                    temporaryPassword: password,
                    reason: who.reason,
                    by: try await desk.enabledOperator(named: who.operator)
                )
            }
            return "\(name): password reset; they choose their own at their next sign-in"
        }
        func run() async throws { print(try await execute(password: readLine(strippingNewline: true))) }
    }

    struct ResetTOTP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-totp",
            abstract: "Forgets an operator's TOTP second factor (a lost phone); they enroll a new key at their next sign-in."
        )
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var who: AdminAccountability
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            try await admin.withDesk(environment: environment) { desk in
                try await desk.resetOperatorTOTP(name: name, reason: who.reason, by: try await desk.enabledOperator(named: who.operator))
            }
            return "\(name): second factor reset; they enroll a new key at their next sign-in"
        }
        func run() async throws { print(try await execute()) }
    }
}
