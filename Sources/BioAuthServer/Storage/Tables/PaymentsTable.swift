import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `payments`: what customers are asked to authorize, with their state, failed attempts and receipt.
    var payments: PaymentsTable { PaymentsTable(db: self) }
    /// `idempotency_keys`: the first response to each (account, key), replayed for the same body.
    var idempotencyKeys: IdempotencyKeysTable { IdempotencyKeysTable(db: self) }
}

/// The statements on `payments`.
struct PaymentsTable: Table {
    let db: any SQLDatabase

    static let columns = [
        "id", "account_id", "amount_minor", "currency", "payee_id", "payee_name", "memo", "status", "failed_attempts", "created_at", "expires_at",
        "authorized_at", "authorization_method", "device_id", "receipt", "payee_verified",
    ]

    /// The account's payment `id`, as stored (a pending one past its expiry is still `pending` here).
    func find(_ id: String, account: String) async throws -> PaymentInfo? {
        try await db.first(Self.byID(id, account)).map(PaymentInfo.init(row:))
    }

    /// The account that holds payment `id`, whoever's it is: for support's search by an id a customer reads out.
    func owner(of id: String) async throws -> String? {
        try await db.select().column("account_id").from("payments").where("id", .equal, id).first()?.decode(column: "account_id", as: String.self)
    }

    /// Stores a new pending payment.
    func insert(_ payment: PaymentInfo) async throws {
        try await db.run(
            Self.insertPayment(
                payment.id,
                payment.accountID,
                payment.amountMinor,
                payment.currency,
                payment.payeeID,
                payment.payeeName,
                payment.memo,
                payment.status.rawValue,
                payment.createdAt.millisecondsSince1970,
                payment.expiresAt.millisecondsSince1970,
                payment.payeeVerified.map { $0 ? 1 : 0 }
            )
        )
    }

    /// The sum, in minor units, of the account's payments in `currency` that `device` authorized at or after `since`: what a
    /// device in its cooling-off has spent of its daily limit (read through the account's index; only such a device asks).
    func authorizedTotal(account: String, device: String, currency: String, since: Int64) async throws -> Int64 {
        // PostgreSQL sums BIGINT as NUMERIC: cast back.
        try await db.raw(
            """
            SELECT CAST(COALESCE(SUM(amount_minor), 0) AS BIGINT) AS total FROM payments WHERE account_id = \(bind: account) \
            AND device_id = \(bind: device) AND currency = \(bind: currency) AND status = 'authorized' AND authorized_at >= \(bind: since)
            """
        ).first()?.decode(column: "total", as: Int64.self) ?? 0
    }

    /// Moves the payment from pending to authorized with its receipt; false when it was not pending any more (another unit
    /// of work got there first). The status condition makes the move happen once.
    func markAuthorized(_ id: String, at: Int64, method: String, device: String?, receipt: PaymentReceipt) async throws -> Bool {
        !(try await db.all(Self.authorize(at, method, device, try StoredJSON.encode(receipt), id))).isEmpty
    }

    /// Moves the payment from pending to cancelled; nothing changes for one that is not pending.
    func markCancelled(_ id: String) async throws {
        try await db.update("payments").set("status", to: PaymentInfo.Status.cancelled.rawValue)
            .where("id", .equal, id).where("status", .equal, PaymentInfo.Status.pending.rawValue).run()
    }

    /// Moves a pending payment whose expiry is at or before `now` to expired; false when it was not (already moved, by
    /// another instance perhaps).
    func markExpired(_ id: String, now: Int64) async throws -> Bool {
        !(try await db.update("payments").set("status", to: PaymentInfo.Status.expired.rawValue)
            .where("id", .equal, id).where("status", .equal, PaymentInfo.Status.pending.rawValue).where("expires_at", .lessThanOrEqual, now)
            .returning("id").all()).isEmpty
    }

    /// Counts one more failed authorization in the database (not a count read earlier, so concurrent failures all count),
    /// and locks the payment if it is still pending and this failure reaches `lockAt`. Returns the failures counted so
    /// far and the status now; nil when there is no such payment.
    func recordFailedAttempt(_ id: String, lockAt: Int) async throws -> (failures: Int, status: PaymentInfo.Status)? {
        guard let row = try await db.first(Self.failedAttempt(Int64(lockAt), id)) else { return nil }
        guard let status = PaymentInfo.Status(rawValue: try row.decode(column: "status", as: String.self)) else {
            throw UnreadableRow(table: "payments", column: "status")
        }
        return (try row.decode(column: "failed_attempts", as: Int.self), status)
    }

    /// The account's payments, newest first; only those in `status` as a client sees it at `now` when given.
    func list(account: String, status: PaymentInfo.Status?, now: Int64, limit: Int) async throws -> [PaymentInfo] {
        var query = select().where("account_id", .equal, account)
        if let status { query = query.where(Self.statusCondition(status, now: now)) }
        return try await query.orderBy("created_at", .descending).limit(limit).all().map(PaymentInfo.init(row:))
    }

    /// Pending payments whose expiry is at or before `now`, soonest first (the expiry sweep).
    func overdue(now: Int64, limit: Int) async throws -> [PaymentInfo] {
        try await select().where("status", .equal, PaymentInfo.Status.pending.rawValue).where("expires_at", .lessThanOrEqual, now)
            .orderBy("expires_at").limit(limit).all().map(PaymentInfo.init(row:))
    }

    /// What the support desk's payment search asks for; every part is optional.
    struct Search: Sendable {
        var status: PaymentInfo.Status?
        /// A payee id (exactly) or part of a payee's name (any case).
        var payee: String?
        var from: Int64?
        var until: Int64?
        var minAmountMinor: Int64?
        var maxAmountMinor: Int64?
        var currency: String? = nil
    }

    /// Payments of every account matching `search` at `now`, newest first.
    func search(_ search: Search, now: Int64, limit: Int) async throws -> [PaymentInfo] {
        var query = select()
        if let status = search.status { query = query.where(Self.statusCondition(status, now: now)) }
        if let payee = search.payee {
            let pattern = "%" + likeEscaped(payee.lowercased()) + "%"
            query = query.where("(payee_id = \(bind: payee) OR LOWER(payee_name) LIKE \(bind: pattern) ESCAPE '\\')" as SQLQueryString)
        }
        if let from = search.from { query = query.where("created_at", .greaterThanOrEqual, from) }
        if let until = search.until { query = query.where("created_at", .lessThan, until) }
        if let minimum = search.minAmountMinor { query = query.where("amount_minor", .greaterThanOrEqual, minimum) }
        if let maximum = search.maxAmountMinor { query = query.where("amount_minor", .lessThanOrEqual, maximum) }
        if let currency = search.currency { query = query.where("currency", .equal, currency) }
        return try await query.orderBy("created_at", .descending).orderBy("id", .descending).limit(limit).all().map(PaymentInfo.init(row:))
    }

    private func select() -> SQLSelectBuilder { db.select().columns(Self.columns.map { SQLColumn($0) }).from("payments") }

    /// The rows of payments in `status` as a client sees it at `now` (milliseconds): a pending payment past its expiry is
    /// expired.
    private static func statusCondition(_ status: PaymentInfo.Status, now: Int64) -> SQLQueryString {
        switch status {
        case .pending: "(status = 'pending' AND expires_at > \(bind: now))"
        case .expired: "(status = 'expired' OR (status = 'pending' AND expires_at <= \(bind: now)))"
        default: "status = \(bind: status.rawValue)"
        }
    }

    // The statements of every payment (FixedSQL: no builder serialized per call).
    static let byID = FixedSQL("SELECT \(columns.joined(separator: ", ")) FROM payments WHERE id = ? AND account_id = ? LIMIT 1")
    static let insertPayment = FixedSQL(
        """
        INSERT INTO payments (\(columns.joined(separator: ", "))) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL, NULL, NULL, NULL, ?)
        """
    )
    /// Binds: the failures that lock, the payment. `SET` expressions read the row as it was before this update.
    static let failedAttempt = FixedSQL(
        """
        UPDATE payments SET failed_attempts = failed_attempts + 1, \
        status = CASE WHEN status = '\(PaymentInfo.Status.pending.rawValue)' AND failed_attempts + 1 >= ? \
        THEN '\(PaymentInfo.Status.locked.rawValue)' ELSE status END \
        WHERE id = ? RETURNING failed_attempts, status
        """
    )
    static let authorize = FixedSQL(
        """
        UPDATE payments SET status = '\(PaymentInfo.Status.authorized.rawValue)', authorized_at = ?, authorization_method = ?, device_id = ?, \
        receipt = ? WHERE id = ? AND status = '\(PaymentInfo.Status.pending.rawValue)' RETURNING id
        """
    )

    /// The statements run on every payment, with sample values: `QueryPlanTests` checks that each finds its rows through
    /// an index.
    static let hotStatements: [FixedStatement] = [
        byID("p", "a"),
        authorize(Int64(1), "biometric", "d", "{}", "p"),
        failedAttempt(Int64(5), "p"),
    ]
}

extension PaymentInfo {
    /// A `payments` row.
    init(row: any SQLRow) throws {
        guard let status = Status(rawValue: try row.decode(column: "status", as: String.self)) else {
            throw UnreadableRow(table: "payments", column: "status")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            amountMinor: try row.decode(column: "amount_minor", as: Int64.self),
            currency: try row.decode(column: "currency", as: String.self),
            payeeID: try row.decode(column: "payee_id", as: String.self),
            payeeName: try row.decode(column: "payee_name", as: String.self),
            memo: try row.decode(column: "memo", as: String?.self),
            status: status,
            failedAttempts: try row.decode(column: "failed_attempts", as: Int.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
            authorizedAt: Date(storedMilliseconds: try row.decode(column: "authorized_at", as: Int64?.self)),
            authorizationMethod: try row.decode(column: "authorization_method", as: String?.self),
            deviceID: try row.decode(column: "device_id", as: String?.self),
            receipt: try row.decode(column: "receipt", as: String?.self).map { try StoredJSON.decode(PaymentReceipt.self, $0) },
            payeeVerified: try row.decode(column: "payee_verified", as: Int?.self).map { $0 != 0 }
        )
    }
}

/// The statements on `idempotency_keys`.
struct IdempotencyKeysTable: Table {
    let db: any SQLDatabase

    /// What the first request with a key stored: its body's fingerprint and the response to replay.
    struct Stored: Sendable {
        var requestHash: String
        var response: PaymentInfo

        /// A row with the key's `request_hash` and `response`.
        init(row: any SQLRow) throws {
            requestHash = try row.decode(column: "request_hash", as: String.self)
            response = try StoredJSON.decode(PaymentInfo.self, try row.decode(column: "response", as: String.self))
        }
    }

    /// The first use of `key` on `account`, if any.
    func find(account: String, key: String) async throws -> Stored? {
        try await db.first(Self.byKey(account, key)).map(Stored.init(row:))
    }

    /// The first use of a service client's `key` (stored as `" CLIENT KEY"`), on whichever account, with that account.
    func find(clientKey key: String) async throws -> (accountID: String, stored: Stored)? {
        guard let row = try await db.first(Self.byClientKey(key)) else { return nil }
        return (try row.decode(column: "account_id", as: String.self), try Stored(row: row))
    }

    /// Records the first use of `key` on `account` and the response it got; false when the key is recorded already (by a
    /// unit of work that committed after this one looked for it), and nothing is written.
    func insert(account: String, key: String, requestHash: String, response: PaymentInfo, at: Int64) async throws -> Bool {
        !(try await db.all(Self.insertKey(account, key, requestHash, response.id, try StoredJSON.encode(response), at))).isEmpty
    }

    static let byKey = FixedSQL(
        "SELECT request_hash, response FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ? LIMIT 1"
    )
    static let byClientKey = FixedSQL("SELECT account_id, request_hash, response FROM idempotency_keys WHERE idempotency_key = ? LIMIT 1")
    static let insertKey = FixedSQL(
        """
        INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, payment_id, response, created_at) VALUES (?, ?, ?, ?, ?, ?) \
        ON CONFLICT (account_id, idempotency_key) DO NOTHING RETURNING account_id
        """
    )

    /// Run on every payment created: `QueryPlanTests` checks each finds its row through an index.
    static let hotStatements: [FixedStatement] = [byKey("a", "k"), byClientKey(" svc_1 k")]
}

// MARK: Retention

extension IdempotencyKeysTable {
    /// Keys first used before `cutoff`.
    static func purge(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "idempotency_keys", key: "account_id, idempotency_key", condition: "created_at < \(bind: cutoff)")
    }
}
