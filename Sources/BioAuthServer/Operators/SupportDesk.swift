import BioAuthCore
import CoreMetrics
import Foundation
import Logging
import SQLKit

/// Who does a support action and why: written into the audit event, which the customer sees in `GET /v1/audit`.
struct SupportAction: Sendable {
    let operatorID: String
    let reason: String

    /// What the audit log names as the one who acted from `bioauth admin` (the command line, run by whoever holds the
    /// database): there is no signed-in operator there.
    static let commandLineActor = "bioauth-admin"

    /// A change made from `bioauth admin`, with what it was.
    static func commandLine(_ reason: String) -> SupportAction { SupportAction(operatorID: commandLineActor, reason: reason) }
}

/// Why a support request was refused.
public enum SupportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The operator is unknown, disabled, or their role does not allow the action.
    case notAllowed(String)
    /// No such customer, device or payment.
    case notFound(String)
    /// The reason is missing or unfit (1-500 characters, no control characters), or the payment is no longer pending.
    case invalid(String)

    /// What went wrong, for the command line and the console.
    public var description: String {
        switch self {
        case .notAllowed(let text), .notFound(let text), .invalid(let text): text
        }
    }
}

/// The support actions and the customer view, shared by `bioauth admin customer` and the operator console. Each action
/// names the operator and a reason; both go into the audit event the customer sees. `viewer` operators may only read.
///
/// ```swift
/// // Partial: assumes database: any DatabaseExecutor; configuration: ServerConfiguration
/// let desk = try await SupportDesk.open(database: database, configuration: configuration)
/// let record = try await desk.customer("alice")
/// try await desk.revokeDevice(record.devices[0].id, customer: record.accountID, operator: "mei", reason: "Phone reported stolen (call 4711)")
/// await desk.close()
/// ```
public struct SupportDesk: Sendable {
    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource
    /// Writes the audit and outbox events of support actions, and the changes the customer's own requests also make.
    let recorder: ChangeRecorder
    /// The operators, for admins' actions.
    let operators: Operators
    /// How long a code the desk hands out is good for (``BindingPolicy/codeLifetime``).
    let codeLifetime: TimeInterval

    /// The desk of the running server: its database, clock and password hashing threads.
    init(service: BioAuthService) {
        self.database = service.database
        self.clock = service.clock
        self.random = service.random
        self.recorder = service.recorder
        self.operators = Operators(service: service)
        self.codeLifetime = service.configuration.binding.codeLifetime
    }

    /// A desk over `database` with the server's `configuration` (its bcrypt cost and webhook settings), for the command
    /// line. It signs nothing and loads no receipt or PIN key.
    public static func open(
        database: any DatabaseExecutor,
        configuration: ServerConfiguration,
        clock: any WallClock = SystemClock(),
        logger: Logger = Logger(label: "bioauth-support")
    ) async throws -> SupportDesk {
        let random = SystemRandomSource()
        return SupportDesk(
            database: database,
            clock: clock,
            random: random,
            recorder: ChangeRecorder(
                clock: clock,
                random: random,
                dialect: database.dialect,
                webhookRetryWindow: configuration.webhooks.retryWindow,
                logger: logger
            ),
            operators: Operators(database: database, clock: clock, random: random, bcryptCost: configuration.bcryptCost),
            codeLifetime: configuration.binding.codeLifetime
        )
    }

    private init(
        database: any DatabaseExecutor,
        clock: any WallClock,
        random: any RandomSource,
        recorder: ChangeRecorder,
        operators: Operators,
        codeLifetime: TimeInterval
    ) {
        self.database = database
        self.clock = clock
        self.random = random
        self.recorder = recorder
        self.operators = operators
        self.codeLifetime = codeLifetime
    }

    /// Kept for callers of ``open(database:configuration:clock:logger:)``: the desk holds nothing that needs stopping (the
    /// database is the caller's).
    public func close() async {}

    // MARK: Internals

    /// `reason` trimmed, when it is 1-500 characters without control characters.
    static func checkedReason(_ reason: String) throws -> String {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty, Validation.isDisplayable(reason, maxCharacters: 500) else {
            throw SupportError.invalid("a reason is required: 1-500 characters without control characters")
        }
        return reason
    }

    /// The operator named `name`, if enabled and allowed to act (support or admin), with a fit reason.
    func authorize(_ name: String, reason: String) async throws -> SupportAction {
        let reason = try Self.checkedReason(reason)
        let found = try await database.transaction { db in try await db.operators.find(name: name) }
        guard let found, found.disabledAt == nil else { throw SupportError.notAllowed("no enabled operator named \(name)") }
        guard found.role != .viewer else { throw SupportError.notAllowed("\(name) is a viewer: viewers only read") }
        return SupportAction(operatorID: found.id, reason: reason)
    }

    /// The account id of the customer with this username (any case) or account id.
    func accountID(_ customer: String) async throws -> String {
        guard (1...64).contains(customer.utf8.count),
            let id = try await database.transaction({ db in try await db.accounts.find(idOrUsername: customer.lowercased())?.id })
        else { throw SupportError.notFound("no customer with the username or account id \(customer)") }
        return id
    }

    /// Refuses `operator` unless it is an enabled admin.
    static func requireAdmin(_ operator: Operator) throws {
        guard `operator`.role == .admin, `operator`.disabledAt == nil else { throw SupportError.notAllowed("only admins can do this") }
    }
}
