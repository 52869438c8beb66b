import ArgumentParser
import BioAuthCore
import BioAuthServer
import Foundation

/// `bioauth admin customer`: what the bank's support staff look up and do for a customer who calls, from the command
/// line (the operator console does the same). Every action names the operator and a reason; both go into the audit
/// event the customer sees.
struct CustomerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customer",
        abstract:
            "Look up a customer; revoke a device or passkey, end sessions, unlock, clear a PIN lock, cancel a pending payment, hand out a binding, recovery or password reset code (audited with a reason).",
        subcommands: [
            Find.self, Show.self, RevokeDevice.self, RevokePasskey.self, EndSessions.self, Unlock.self, ClearPINLock.self, CancelPayment.self,
            Code.self,
        ]
    )

    /// Who acts and why: required by every action.
    struct Accountability: ParsableArguments {
        @Option(help: "The operator taking the action (an enabled support or admin operator).") var `operator`: String
        @Option(help: "Why, as told to the customer: 1-500 characters, recorded in their audit log.") var reason: String
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The customer's account and locks, devices, passkeys, live sessions, recent payments and security timeline."
        )
        @Argument(help: "A username or an account id.") var customer: String
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            let record = try await admin.withDesk(environment: environment) { try await $0.customer(customer) }
            return CustomerCommand.describe(record)
        }
        func run() async throws { print(try await execute()) }
    }

    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Finds customers: by the start of a username in any case, or by any id (account, device, payment, passkey, session)."
        )
        @Argument(help: "The start of a username (Carol.L finds carol.li), or an id the customer reads out.") var query: String
        @OptionGroup var admin: AdminOptions

        func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
            switch try await admin.withDesk(environment: environment, { try await $0.search(query) }) {
            case .id(let kind, let id, let accountID): return "\(accountID)  (the \(kind) \(id) is theirs)"
            case .usernames(let matches) where !matches.isEmpty: return matches.map { "\($0.accountID)  \($0.username)" }.joined(separator: "\n")
            case .usernames: throw ValidationError("no customer matches \(query)")
            }
        }
        func run() async throws { print(try await execute()) }
    }

    struct RevokeDevice: SupportActionCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-device",
            abstract: "Revokes a device: its key is refused and its sessions end."
        )
        @Argument(help: "The customer: a username or an account id.") var customer: String
        @Argument(help: "The device id (one of the customer's).") var deviceID: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            try await desk.revokeDevice(deviceID, customer: customer, operator: who.operator, reason: who.reason)
            return "device \(deviceID) revoked"
        }
    }

    struct RevokePasskey: SupportActionCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-passkey",
            abstract: "Revokes a passkey: it signs in no more and the sessions it started end."
        )
        @Argument(help: "The customer: a username or an account id.") var customer: String
        @Argument(help: "The passkey id (one of the customer's).") var passkeyID: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            try await desk.revokePasskey(passkeyID, customer: customer, operator: who.operator, reason: who.reason)
            return "passkey \(passkeyID) revoked"
        }
    }

    struct EndSessions: SupportActionCommand {
        static let configuration = CommandConfiguration(
            commandName: "end-sessions",
            abstract: "Ends all the customer's sessions; they sign in again."
        )
        @Argument(help: "A username or an account id.") var customer: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            try await desk.endSessions(customer: customer, operator: who.operator, reason: who.reason)
            return "\(customer): every session ended"
        }
    }

    struct Unlock: SupportActionCommand {
        static let configuration = CommandConfiguration(abstract: "Lifts a password lock.")
        @Argument(help: "A username or an account id.") var customer: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            try await desk.unlockAccount(customer: customer, operator: who.operator, reason: who.reason)
            return "\(customer): unlocked"
        }
    }

    struct Code: SupportActionCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A one-time code for the customer, after the bank's identity check: bind (one more phone), recovery (a lost phone's: the phone it binds replaces every other) or password-reset. Shown once; hand it over through the bank's own channel."
        )
        @Argument(help: "bind, recovery or password-reset.") var purpose: SupportDesk.CodePurpose
        @Argument(help: "A username or an account id.") var customer: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            let (code, expiresAt) = try await desk.issueCode(purpose, customer: customer, operator: who.operator, reason: who.reason)
            return "\(code)\n\(purpose.rawValue) code for \(customer), good once until \(expiresAt.formatted(.iso8601)); it is not shown again"
        }
    }

    struct ClearPINLock: SupportActionCommand {
        static let configuration = CommandConfiguration(commandName: "clear-pin-lock", abstract: "Lifts a payment PIN lock.")
        @Argument(help: "A username or an account id.") var customer: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            try await desk.clearPINLock(customer: customer, operator: who.operator, reason: who.reason)
            return "\(customer): PIN lock cleared"
        }
    }

    struct CancelPayment: SupportActionCommand {
        static let configuration = CommandConfiguration(commandName: "cancel-payment", abstract: "Cancels a pending payment.")
        @Argument(help: "The customer: a username or an account id.") var customer: String
        @Argument(help: "The payment id (one of the customer's).") var paymentID: String
        @OptionGroup var who: Accountability
        @OptionGroup var admin: AdminOptions

        func act(_ desk: SupportDesk) async throws -> String {
            try await desk.cancelPayment(paymentID, customer: customer, operator: who.operator, reason: who.reason)
            return "payment \(paymentID) cancelled"
        }
    }

    /// The customer as text: one section per kind, times in UTC.
    static func describe(_ record: CustomerRecord) -> String {
        let time = { (date: Date) in (try? InternetDateTime().encode(date)) ?? "\(date)" }
        var lines = ["\(record.username)  \(record.accountID)  since \(time(record.createdAt))"]
        lines.append("  password: " + (record.lockedUntil.map { "locked until \(time($0))" } ?? "not locked"))
        lines.append("  PIN: " + (record.pinLockedUntil.map { "locked until \(time($0))" } ?? "not locked"))
        lines.append("devices (\(record.devices.count)):")
        for device in record.devices {
            let state = device.revokedAt.map { "revoked \(time($0))" } ?? "active"
            lines.append(
                "  \(device.id)  \(device.biometryKind)  \"\(device.name)\"  App Attest: \(device.attestation == "apple-appattest" ? "yes" : "no")  registered \(time(device.createdAt))  last used \(device.lastUsedAt.map(time) ?? "never")  \(state)"
            )
        }
        lines.append("passkeys (\(record.passkeys.count)):")
        for passkey in record.passkeys {
            let state = passkey.revokedAt.map { "revoked \(time($0))" } ?? "active"
            lines.append(
                "  \(passkey.id)  \(passkey.backupEligible ? "synced" : "device-bound")  \"\(passkey.name)\"  attestation: \(passkey.attestationFormat)\(passkey.attestationTrusted ? " (trusted)" : "")  registered \(time(passkey.createdAt))  last used \(passkey.lastUsedAt.map(time) ?? "never")  \(state)"
            )
        }
        lines.append("live sessions (\(record.sessions.count)):")
        for session in record.sessions {
            let key = session.deviceID.map { " (device \($0))" } ?? session.passkeyID.map { " (passkey \($0))" } ?? ""
            lines.append("  \(session.id)  \(session.method)\(key)  installation \(session.installationID)  since \(time(session.createdAt))")
        }
        lines.append("payments (\(record.payments.count), newest first):")
        for payment in record.payments {
            let amount = payment.amount.map { "\($0.decimalString) \($0.currency.code)" } ?? "?"
            lines.append("  \(payment.id)  \(amount) to \"\(payment.payeeName)\" (\(payment.payeeID))  \(payment.status)  \(time(payment.createdAt))")
        }
        lines.append("security timeline (newest first):")
        for event in record.events {
            var line = "  \(time(event.occurredAt))  \(event.kind)  \(event.succeeded ? "success" : "failure")"
            if let code = event.code { line += "  \(code)" }
            if let id = event.operatorID { line += "  by \(id): \(event.reason ?? "")" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

/// A support action on the command line: it opens a desk over the database, takes the action, and prints what it did.
extension SupportDesk.CodePurpose: ExpressibleByArgument {}

protocol SupportActionCommand: AsyncParsableCommand {
    var admin: AdminOptions { get }
    /// Takes the action; the line to print.
    func act(_ desk: SupportDesk) async throws -> String
}

extension SupportActionCommand {
    func execute(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> String {
        try await admin.withDesk(environment: environment) { try await act($0) }
    }

    func run() async throws { print(try await execute()) }
}

extension AdminOptions {
    /// Runs `body` with a support desk over the database; a refused request is a usage error with its reason.
    func withDesk<R>(environment: [String: String], _ body: (SupportDesk) async throws -> R) async throws -> R {
        try await withDatabase(environment: environment) { executor, configuration in
            let desk = try await SupportDesk.open(database: executor, configuration: configuration)
            do {
                let result = try await body(desk)
                await desk.close()
                return result
            } catch let error as SupportError {
                await desk.close()
                throw ValidationError(error.description)
            } catch {
                await desk.close()
                throw error
            }
        }
    }
}
