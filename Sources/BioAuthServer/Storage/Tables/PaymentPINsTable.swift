import Foundation
import SQLKit

extension SQLDatabase {
    /// `payment_pins`: each account's sealed payment PIN hash, its wrong-PIN count and lock.
    var paymentPINs: PaymentPINsTable { PaymentPINsTable(db: self) }
}

/// The statements on `payment_pins`.
struct PaymentPINsTable: Table {
    let db: any SQLDatabase

    /// An account's PIN as stored: the hash (sealed, or a bcrypt hash from before sealing) and its failures and lock.
    struct Stored: Sendable {
        var hash: String
        var failedAttempts: Int
        var lockedUntil: Date?
    }

    /// The account's PIN, if one is set.
    func find(account: String) async throws -> Stored? {
        guard
            let row = try await db.select().columns("pin_hash", "failed_attempts", "locked_until").from("payment_pins")
                .where("account_id", .equal, account).first()
        else { return nil }
        return Stored(
            hash: try row.decode(column: "pin_hash", as: String.self),
            failedAttempts: try row.decode(column: "failed_attempts", as: Int.self),
            lockedUntil: Date(storedMilliseconds: try row.decode(column: "locked_until", as: Int64?.self))
        )
    }

    /// Until when the account's PIN payments are locked, if a lock was ever set (it may have passed).
    func lockedUntil(account: String) async throws -> Date? {
        Date(
            storedMilliseconds: try await db.select().column("locked_until").from("payment_pins").where("account_id", .equal, account).first()?
                .decode(column: "locked_until", as: Int64?.self)
        )
    }

    /// Sets the account's PIN hash (replacing any), with no failure and no lock.
    func replace(account: String, hash: String, at: Int64) async throws {
        try await db.delete(from: "payment_pins").where("account_id", .equal, account).run()
        try await db.insert(into: "payment_pins").columns("account_id", "pin_hash", "failed_attempts", "locked_until", "updated_at")
            .values(SQLBind(account), SQLBind(hash), SQLBind(0), SQLBind(Int64?.none), SQLBind(at))
            .run()
    }

    /// Records `failures` wrong PINs in a row.
    func recordFailures(account: String, failures: Int) async throws {
        try await db.update("payment_pins").set("failed_attempts", to: failures).where("account_id", .equal, account).run()
    }

    /// Locks PIN payments until `until` and restarts the count.
    func lock(account: String, until: Int64) async throws {
        try await db.update("payment_pins").set("failed_attempts", to: 0).set("locked_until", to: until).where("account_id", .equal, account).run()
    }

    /// Clears the count of wrong PINs and the lock.
    func clearLock(account: String) async throws {
        try await db.update("payment_pins").set("failed_attempts", to: 0).set("locked_until", to: SQLLiteral.null).where(
            "account_id",
            .equal,
            account
        )
        .run()
    }

    /// One stored hash that is not a legacy bcrypt hash (`legacyPattern`, a `LIKE` pattern), if any.
    func anySealedHash(legacyPattern: String) async throws -> String? {
        try await db.select().column("pin_hash").from("payment_pins").where("pin_hash", .notLike, legacyPattern).limit(1).first()?
            .decode(column: "pin_hash", as: String.self)
    }

    /// Every account's hash matching `legacyPattern`, by account.
    func legacyHashes(pattern: String) async throws -> [(account: String, hash: String)] {
        try await db.select().columns("account_id", "pin_hash").from("payment_pins").where("pin_hash", .like, pattern).all().map { row in
            (try row.decode(column: "account_id", as: String.self), try row.decode(column: "pin_hash", as: String.self))
        }
    }

    /// Replaces the account's hash `old` by `new`; nothing changes when the hash is no longer `old`.
    func replaceHash(account: String, old: String, new: String) async throws {
        try await db.update("payment_pins").set("pin_hash", to: new).where("account_id", .equal, account).where("pin_hash", .equal, old).run()
    }
}
