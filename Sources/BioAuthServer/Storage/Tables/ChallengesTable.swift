import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `challenges` and `passkey_challenges`: single-use challenges for device keys and for passkey ceremonies.
    var challenges: ChallengesTable { ChallengesTable(db: self) }
}

/// What every single-use challenge carries to be checked: whether it was used, and until when it lives.
struct ChallengeUse: Sendable {
    var consumed: Bool
    var expiresAt: Date
}

/// The statements on `challenges` and `passkey_challenges`.
struct ChallengesTable: Table {
    let db: any SQLDatabase

    /// A device-key challenge as stored: its bytes (nil when the stored text does not decode) and what it is bound to.
    struct Stored: Sendable {
        var purpose: String
        var challenge: Data?
        var accountID: String
        var sessionID: String?
        var deviceID: String?
        var paymentID: String?
        var use: ChallengeUse

        fileprivate init(_ row: any SQLRow, consumed: Bool) throws {
            purpose = try row.decode(column: "purpose", as: String.self)
            challenge = Base64URL.decode(try row.decode(column: "challenge", as: String.self))
            accountID = try row.decode(column: "account_id", as: String.self)
            sessionID = try row.decode(column: "session_id", as: String?.self)
            deviceID = try row.decode(column: "device_id", as: String?.self)
            paymentID = try row.decode(column: "payment_id", as: String?.self)
            use = ChallengeUse(
                consumed: consumed,
                expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self))
            )
        }
    }

    /// Stores a new device-key challenge bound to `binding`.
    func insert(_ challenge: IssuedChallenge, binding: ChallengeBinding, at: Int64) async throws {
        try await db.run(
            Self.insertChallenge(
                challenge.id,
                binding.purpose.rawValue,
                Base64URL.encode(challenge.challenge),
                binding.account,
                binding.session,
                binding.device,
                binding.payment,
                at,
                challenge.expiresAt.millisecondsSince1970
            )
        )
    }

    /// Marks the challenge `id` used at `at` when it is unused and unexpired at `at`, in one statement, returning what it
    /// is bound to; nil when there is no such usable challenge (not found, used or expired: ``find(_:)`` tells which).
    ///
    /// The caller checks the binding and, when it does not match, hands the challenge back with ``release(_:)`` in the
    /// same unit of work: one round trip where ``find(_:)`` and ``markConsumed(_:at:)`` take two.
    func take(_ id: String, at: Int64) async throws -> Stored? {
        guard let row = try await db.first(Self.take(at, id, at)) else { return nil }
        // As it was when taken: unused.
        return try Stored(row, consumed: false)
    }

    /// Makes the challenge `id` unused again: the undoing of ``take(_:at:)``, for a challenge bound to something else,
    /// in the unit of work that took it.
    func release(_ id: String) async throws {
        try await db.run(Self.release(id))
    }

    /// The device-key challenge `id`.
    func find(_ id: String) async throws -> Stored? {
        guard let row = try await db.first(Self.byID(id)) else { return nil }
        return try Stored(row, consumed: try row.decode(column: "consumed_at", as: Int64?.self) != nil)
    }

    /// A payment's challenge, as support sees it.
    struct PaymentChallenge: Sendable {
        var id: String
        var deviceID: String?
        var createdAt: Date
        var expiresAt: Date
        var consumedAt: Date?
    }

    /// The challenges issued for payment `id` and not purged yet (retention deletes them once expired), oldest first.
    func forPayment(_ id: String) async throws -> [PaymentChallenge] {
        try await db.raw(
            """
            SELECT id, device_id, created_at, expires_at, consumed_at FROM challenges
            WHERE payment_id = \(bind: id) ORDER BY created_at, id
            """
        ).all().map { row in
            PaymentChallenge(
                id: try row.decode(column: "id", as: String.self),
                deviceID: try row.decode(column: "device_id", as: String?.self),
                createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
                consumedAt: Date(storedMilliseconds: try row.decode(column: "consumed_at", as: Int64?.self))
            )
        }
    }

    /// Marks the device-key challenge used at `at`; false when it was used already, by a unit of work that committed after
    /// this one read it (the check holds at any isolation level).
    func markConsumed(_ id: String, at: Int64) async throws -> Bool {
        !(try await db.all(Self.consume(at, id))).isEmpty
    }

    // MARK: Passkey ceremonies

    /// A passkey ceremony's challenge as stored.
    struct StoredPasskey: Sendable {
        /// `create` or `get`.
        var ceremony: String
        var challenge: Data?
        var accountID: String?
        var sessionID: String?
        var use: ChallengeUse
    }

    /// Stores a new passkey ceremony challenge.
    func insertPasskey(id: String, ceremony: String, challenge: Data, account: String?, session: String?, at: Int64, expiresAt: Int64) async throws {
        try await db.insert(into: "passkey_challenges")
            .columns("id", "ceremony", "challenge", "account_id", "session_id", "created_at", "expires_at", "consumed_at")
            .values(
                SQLBind(id),
                SQLBind(ceremony),
                SQLBind(Base64URL.encode(challenge)),
                SQLBind(account),
                SQLBind(session),
                SQLBind(at),
                SQLBind(expiresAt),
                SQLBind(Int64?.none)
            )
            .run()
    }

    /// The passkey ceremony challenge `id`.
    func findPasskey(_ id: String) async throws -> StoredPasskey? {
        guard
            let row = try await db.select().columns("ceremony", "challenge", "account_id", "session_id", "expires_at", "consumed_at")
                .from("passkey_challenges").where("id", .equal, id).first()
        else { return nil }
        return StoredPasskey(
            ceremony: try row.decode(column: "ceremony", as: String.self),
            challenge: Base64URL.decode(try row.decode(column: "challenge", as: String.self)),
            accountID: try row.decode(column: "account_id", as: String?.self),
            sessionID: try row.decode(column: "session_id", as: String?.self),
            use: ChallengeUse(
                consumed: try row.decode(column: "consumed_at", as: Int64?.self) != nil,
                expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self))
            )
        )
    }

    /// Marks the passkey challenge used at `at`; false when it was used already (by a concurrent request).
    func markPasskeyConsumed(_ id: String, at: Int64) async throws -> Bool {
        !(try await db.update("passkey_challenges").set("consumed_at", to: at).where("id", .equal, id).where("consumed_at", .is, SQLLiteral.null)
            .returning("id").all()).isEmpty
    }

    // The statements of every sign-in and payment (FixedSQL: no builder serialized per call).
    static let insertChallenge = FixedSQL(
        """
        INSERT INTO challenges (id, purpose, challenge, account_id, session_id, device_id, payment_id, created_at, expires_at, consumed_at) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)
        """
    )
    static let byID = FixedSQL(
        "SELECT purpose, challenge, account_id, session_id, device_id, payment_id, expires_at, consumed_at FROM challenges WHERE id = ? LIMIT 1"
    )
    static let consume = FixedSQL("UPDATE challenges SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL RETURNING id")
    /// The expiry is compared as a difference, which no index serves, so that the challenge is found by its key alone.
    /// Written `expires_at > ?`, PostgreSQL planned it on `challenges_by_expiry` (the purge's index) whenever its statistics
    /// said no challenge was live, as they do after a purge has emptied the table and autovacuum analyzed it: each use then
    /// read every live challenge, about 5 000 pages at 330 sign-ins/s, and sign-ins fell behind until the next analyze
    /// (docs/PERFORMANCE.md, "A challenge found by its key, whatever the statistics").
    static let take = FixedSQL(
        """
        UPDATE challenges SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL AND expires_at - ? > 0 \
        RETURNING purpose, challenge, account_id, session_id, device_id, payment_id, expires_at
        """
    )
    static let release = FixedSQL("UPDATE challenges SET consumed_at = NULL WHERE id = ?")

    /// Run on every sign-in and payment: `QueryPlanTests` checks each finds its row through an index.
    static let hotStatements: [FixedStatement] = [take(Int64(1), "c", Int64(1)), byID("c"), consume(Int64(1), "c")]
}

// MARK: Retention

extension ChallengesTable {
    /// Device-key challenges that expired before `now`.
    static func purgeExpired(now: Int64) -> PurgeRule { PurgeRule(table: "challenges", key: "id", condition: "expires_at < \(bind: now)") }

    /// Passkey ceremony challenges that expired before `now`.
    static func purgeExpiredPasskey(now: Int64) -> PurgeRule {
        PurgeRule(table: "passkey_challenges", key: "id", condition: "expires_at < \(bind: now)")
    }
}
