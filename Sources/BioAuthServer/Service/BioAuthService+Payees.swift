import BioAuthCore
import Foundation
import SQLKit

/// A payee the bank registered: the name payment prompts show for it.
public struct RegisteredPayee: Sendable, Equatable {
    /// The bank's own statement about the payee (BioAuth records it; it does not check it).
    public enum Verification: String, Sendable {
        /// The bank verified the payee.
        case verified
        /// The bank has not verified it.
        case unverified
    }
    /// 1-64 characters of `A-Z a-z 0-9 . _ : -`.
    public var id: String
    /// The name every prompt for a payment to this payee shows, in NFC.
    public var name: String
    /// Whether the bank says it verified the payee.
    public var verification: Verification
    /// Who registered or last changed it: a service client id, or `admin` for `bioauth admin payee`.
    public var registeredBy: String
    /// When it was first registered.
    public var createdAt: Date
    /// When its name or state last changed.
    public var updatedAt: Date
}

/// The payees the bank registered, for `bioauth admin payee` (the backend uses `POST /v1/service/payees`). A payment,
/// whoever asks for it, can only be to a registered payee, and carries the registered name.
public struct PayeeRegistry: Sendable {
    let database: any DatabaseExecutor
    let clock: any WallClock

    /// The registry in `database`.
    public init(database: any DatabaseExecutor, clock: any WallClock = SystemClock()) {
        self.database = database
        self.clock = clock
    }

    /// Registers a payee, or changes a registered one's name or verification state (`created` says which). The name is
    /// checked as every name a prompt shows is (NFC, no invisible characters, no mixed-script look-alikes), and must not
    /// look like another payee's (`DisplayName.lookalikeKeys(_:)`).
    public func register(
        id: String,
        name: String,
        verification: RegisteredPayee.Verification = .verified
    ) async throws
        -> (payee: RegisteredPayee, created: Bool)
    {
        let now = clock.now
        do {
            let recorder = ChangeRecorder.outsideTheServer(database: database, clock: clock, random: SystemRandomSource())
            return try await database.transaction { db in
                let registered = try await Self.register(id: id, name: name, verification: verification.rawValue, by: "admin", at: now, on: db)
                try await recorder.audit(.payeeRegistered, succeeded: true, account: nil, operator: .commandLine(id), on: db)
                return registered
            }
        } catch let error as APIError {
            throw ConfigurationError(message: error.detail)
        }
    }

    /// Stores the look-alike keys of payees registered before they existed (run at start-up; harmless when several
    /// instances run it at once). A payee whose name looks like an earlier one's keeps none and is returned, so that it
    /// can be logged: an operator renames one of the two.
    ///
    /// - Returns: the payees that look like an earlier one: id, and the id it looks like.
    @discardableResult
    public func storeLegacyLookalikeKeys() async throws -> [(id: String, looksLike: String)] {
        try await database.transaction { db in
            var clashes: [(id: String, looksLike: String)] = []
            for payee in try await db.payees.withoutLookalikeKeys() {
                let keys = DisplayName.lookalikeKeys(payee.name)
                if let other = try await db.payees.lookalike(of: keys, other: payee.id) {
                    clashes.append((payee.id, other))
                } else {
                    try await db.payees.setLookalikeKeys(keys, of: payee.id)
                }
            }
            return clashes
        }
    }

    /// Every registered payee, by id.
    public func list() async throws -> [RegisteredPayee] {
        try await database.transaction { db in try await db.payees.list() }
    }

    /// The one place a payee is written: checks the id, the name and the state, then inserts or updates.
    static func register(
        id: String,
        name rawName: String,
        verification rawVerification: String,
        by registeredBy: String,
        at now: Date,
        on db: any SQLDatabase
    )
        async throws -> (payee: RegisteredPayee, created: Bool)
    {
        try Validation.payeeID(id)
        let name = try Validation.displayName(rawName, field: "name", code: .invalidPayee)
        guard let verification = RegisteredPayee.Verification(rawValue: rawVerification) else {
            throw APIError(.malformedRequest, "verification is verified or unverified.")
        }
        let keys = DisplayName.lookalikeKeys(name)
        if let other = try await db.payees.lookalike(of: keys, other: id) {
            throw APIError(
                .payeeNameTaken,
                "name looks like the registered name of payee \(other) (the same letters in another case, or characters that look alike); a prompt could not tell them apart."
            )
        }
        let existing = try await db.payees.find(id)
        let payee = RegisteredPayee(
            id: id,
            name: name,
            verification: verification,
            registeredBy: registeredBy,
            createdAt: existing?.createdAt ?? now,
            updatedAt: now
        )
        if existing == nil {
            try await db.payees.insert(payee, keys: keys)
        } else {
            try await db.payees.update(payee, keys: keys)
        }
        return (payee, existing == nil)
    }
}

extension BioAuthService {
    /// Registers a payee, or changes a registered one's name or verification state (`created` says which), for a service
    /// client holding `payees:write`. Audited with the client that did it.
    func registerPayee(
        id: String,
        name: String,
        verification: String,
        client: AuthenticatedService
    ) async throws
        -> (payee: RegisteredPayee, created: Bool)
    {
        let now = self.now
        return try await commit { db in
            let result = try await PayeeRegistry.register(id: id, name: name, verification: verification, by: client.clientID, at: now, on: db)
            try await recorder.audit(.payeeRegistered, succeeded: true, account: nil, client: client.clientID, on: db)
            return result
        }
    }

    /// A pending payment the bank's backend asks `account` to authorize, to a registered payee whose registered name the
    /// payment carries: the requester never chooses the name the prompt shows.
    func createServicePayment(
        account: String,
        amountMinor: Int64,
        currency: String,
        payeeID: String,
        memo: String?,
        idempotencyKey: String,
        client: AuthenticatedService
    ) async throws -> PaymentInfo {
        guard (1...64).contains(account.utf8.count) else { throw APIError(.accountNotFound, "There is no such account.") }
        let request = try PaymentRequest(
            amountMinor: amountMinor,
            currency: currency,
            payeeID: payeeID,
            payeeName: nil,
            memo: memo,
            idempotencyKey: idempotencyKey
        )
        let known = try await database.transaction { db in try await db.accounts.exists(id: account) }
        guard known else { throw APIError(.accountNotFound, "There is no such account.") }
        return try await createPayment(account: account, session: nil, client: client.clientID, request)
    }

    /// The registered name of `payeeID`, which must be `expected` when one is given, and whether the bank verified it.
    func registeredPayee(_ payeeID: String, expected: String?, on db: any SQLDatabase) async throws -> (name: String, verified: Bool) {
        guard let (name, verified) = try await db.payees.nameAndVerification(of: payeeID) else {
            throw APIError(.payeeNotRegistered, "The payee \(payeeID) is not registered: the bank registers payees (POST /v1/service/payees).")
        }
        if let expected, expected != name {
            throw APIError(
                .payeeNameMismatch,
                "payeeName is not the name the bank registered for \(payeeID); leave it out to use the registered name."
            )
        }
        return (name, verified)
    }
}
