import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `binding_codes`: one-time codes the bank's backend asks for, with which a customer binds a new device (or, for a
    /// password reset, sets a new password).
    var bindingCodes: BindingCodesTable { BindingCodesTable(db: self) }
}

/// A binding code as stored: never the code itself, only its hash.
struct BindingCode: Sendable, Equatable {
    var id: String
    var accountID: String
    /// The service client that asked for it.
    var clientID: String?
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
    /// What the code does.
    var purpose: Purpose = .bind

    /// What a code does.
    enum Purpose: String, Sendable, CaseIterable {
        /// Binds one more device.
        case bind
        /// A lost phone's: the device it binds replaces every other device, passkey and session of the account.
        case recovery
        /// Sets a new password (forgot password); binds nothing.
        case passwordReset = "password_reset"
        /// One of the ten codes the customer made for themselves with a fresh Face ID: a lost phone's way back, as a
        /// recovery code from the bank is. Hashed with the server's pepper, as they hold fewer bits.
        case customerRecovery = "customer_recovery"
    }
}

/// The statements on `binding_codes`.
struct BindingCodesTable: Table {
    let db: any SQLDatabase

    private static let columns = ["id", "account_id", "client_id", "created_at", "expires_at", "used_at", "purpose"]

    /// Stores a new code; `codeHash` is the hash of the code handed to the bank.
    func insert(_ code: BindingCode, codeHash: String) async throws {
        try await db.insert(into: "binding_codes").columns(Self.columns + ["code_hash"])
            .values(
                SQLBind(code.id),
                SQLBind(code.accountID),
                SQLBind(code.clientID),
                SQLBind(code.createdAt.millisecondsSince1970),
                SQLBind(code.expiresAt.millisecondsSince1970),
                SQLBind(Int64?.none),
                SQLBind(code.purpose.rawValue),
                SQLBind(codeHash)
            )
            .run()
    }

    /// Uses the account's code that hashes to `hash` and is for one of `purposes` (for device `device`, when it binds
    /// one), once: the code as it was, or nil (nothing changed) when no unused code of this account and purpose within
    /// its lifetime at `at` has this hash. One conditional statement, so two requests presenting the same code cannot both
    /// use it.
    func use(codeHash hash: String, account: String, purposes: [BindingCode.Purpose], device: String?, at: Int64) async throws -> BindingCode? {
        try await db.update("binding_codes").set("used_at", to: at).set("device_id", to: device)
            .where("code_hash", .equal, hash).where("account_id", .equal, account).where("used_at", .is, SQLLiteral.null)
            .where("expires_at", .greaterThan, at).where("purpose", .in, purposes.map(\.rawValue))
            .returning(Self.columns.map { SQLColumn($0) })
            .first().map(Self.code)
    }

    private static func code(_ row: any SQLRow) throws -> BindingCode {
        guard let purpose = BindingCode.Purpose(rawValue: try row.decode(column: "purpose", as: String.self)) else {
            throw UnreadableRow(table: "binding_codes", column: "purpose")
        }
        return BindingCode(
            id: try row.decode(column: "id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            clientID: try row.decode(column: "client_id", as: String?.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
            usedAt: Date(storedMilliseconds: try row.decode(column: "used_at", as: Int64?.self)),
            purpose: purpose
        )
    }

    /// Whether the account has an unused code for one of `purposes` that hashes to `hash` and is within its lifetime at
    /// `at`: a read, for a check before slow work; ``use(codeHash:account:purposes:device:at:)`` decides.
    func isUsable(codeHash hash: String, account: String, purposes: [BindingCode.Purpose], at: Int64) async throws -> Bool {
        try await db.select().column("id").from("binding_codes")
            .where("code_hash", .equal, hash).where("account_id", .equal, account).where("used_at", .is, SQLLiteral.null)
            .where("expires_at", .greaterThan, at).where("purpose", .in, purposes.map(\.rawValue))
            .first() != nil
    }

    /// Voids the account's unused codes at `at`, all of them (a recovery happened: a code handed out before it binds
    /// nothing) or those of one `purpose` (a new set of recovery codes voids the old). The update takes their rows, so a
    /// recovery with another of them that runs at once waits and then finds it used.
    func voidUnused(account: String, purpose: BindingCode.Purpose? = nil, at: Int64) async throws {
        var voiding = db.update("binding_codes").set("used_at", to: at).where("account_id", .equal, account).where("used_at", .is, SQLLiteral.null)
        if let purpose { voiding = voiding.where("purpose", .equal, purpose.rawValue) }
        try await voiding.run()
    }

    /// The codes past their expiry before `cutoff`, used or not: they can bind nothing any more.
    static func purge(expiredBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "binding_codes", key: "id", condition: "expires_at < \(bind: cutoff)")
    }
}
