import BioAuthCore
import Foundation
import SQLKit

/// A payee the bank registered: the name payment prompts show for it.
struct RegisteredPayee: Sendable, Equatable {
    enum Verification: String, Sendable { case verified, unverified }
    var id: String
    var name: String
    var verification: Verification
    var createdAt: Date
    var updatedAt: Date
}

extension BioAuthService {
    /// Registers a payee, or changes a registered one's name or verification state (`created` says which). The name is
    /// checked as every name a prompt shows is (NFC, no invisible characters, no mixed-script look-alikes). Audited with
    /// the client that did it.
    func registerPayee(id: String, name rawName: String, verification rawVerification: String, client: AuthenticatedService) async throws
        -> (payee: RegisteredPayee, created: Bool)
    {
        try Validation.payeeID(id)
        let name = try Validation.displayName(rawName, field: "name", code: .invalidPayee)
        guard let verification = RegisteredPayee.Verification(rawValue: rawVerification) else {
            throw APIError(.malformedRequest, "verification is verified or unverified.")
        }
        let now = self.now
        return try await commit { db in
            let existing = try await db.raw("SELECT created_at FROM payees WHERE id = \(bind: id)").first()
            let createdAt = try existing.map { Date(millisecondsSince1970: try $0.decode(column: "created_at", as: Int64.self)) } ?? now
            if existing == nil {
                try await db.raw(
                    """
                    INSERT INTO payees (id, name, verification, registered_by, created_at, updated_at)
                    VALUES (\(bind: id), \(bind: name), \(bind: verification.rawValue), \(bind: client.clientID),
                        \(bind: now.millisecondsSince1970), \(bind: now.millisecondsSince1970))
                    """
                ).run()
            } else {
                try await db.raw(
                    """
                    UPDATE payees SET name = \(bind: name), verification = \(bind: verification.rawValue),
                        registered_by = \(bind: client.clientID), updated_at = \(bind: now.millisecondsSince1970) WHERE id = \(bind: id)
                    """
                ).run()
            }
            try await audit(.payeeRegistered, succeeded: true, account: nil, client: client.clientID, on: db)
            return (RegisteredPayee(id: id, name: name, verification: verification, createdAt: createdAt, updatedAt: now), existing == nil)
        }
    }

    /// A pending payment the bank's backend asks `account` to authorize, to a registered payee whose registered name the
    /// payment carries: the requester never chooses the name the prompt shows.
    func createServicePayment(
        account: String, amountMinor: Int64, currency: String, payeeID: String, memo: String?, idempotencyKey: String,
        client: AuthenticatedService
    ) async throws -> PaymentInfo {
        try Validation.payeeID(payeeID)
        guard (1...64).contains(account.utf8.count) else { throw APIError(.accountNotFound, "There is no such account.") }
        let found = try await database.transaction { db in
            (
                payee: try await db.raw("SELECT name FROM payees WHERE id = \(bind: payeeID)").first()?.decode(column: "name", as: String.self),
                account: try await db.raw("SELECT id FROM accounts WHERE id = \(bind: account)").first() != nil
            )
        }
        guard found.account else { throw APIError(.accountNotFound, "There is no such account.") }
        guard let name = found.payee else {
            throw APIError(.payeeNotRegistered, "The payee \(payeeID) is not registered: register it first (POST /v1/service/payees).")
        }
        let request = try PaymentRequest(
            amountMinor: amountMinor, currency: currency, payeeID: payeeID, payeeName: name, memo: memo, idempotencyKey: idempotencyKey)
        return try await createPayment(account: account, session: nil, client: client.clientID, request)
    }
}
