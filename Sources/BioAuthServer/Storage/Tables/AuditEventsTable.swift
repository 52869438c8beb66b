import Foundation
import SQLKit

extension SQLDatabase {
    /// `audit_events`: the security log, append-only until retention purges it.
    var auditEvents: AuditEventsTable { AuditEventsTable(db: self) }
}

/// The statements on `audit_events`.
struct AuditEventsTable: Table {
    let db: any SQLDatabase

    /// Appends an event on `engine`; its sequence number comes from the database (see the statements).
    func insert(_ event: AuditEvent, clientID: String?, engine: DatabaseDialect) async throws {
        let insert = engine == .postgres ? Self.insertPostgres : Self.insertSQLite
        try await db.run(
            insert(
                event.id,
                event.occurredAt.millisecondsSince1970,
                event.kind,
                event.succeeded ? "success" : "failure",
                event.accountID,
                event.deviceID,
                event.sessionID,
                event.code,
                clientID,
                event.operatorID,
                event.reason,
                event.passkeyID,
                event.paymentID,
                event.clientAddress,
                event.userAgent
            )
        )
    }

    /// The columns every listing reads, in `event(_:)`'s order.
    private static let columns =
        "id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code, client_id, operator_id, reason, passkey_id, payment_id, client_address, user_agent"

    /// An event from a row of ``columns``.
    private static func event(_ row: any SQLRow) throws -> AuditEvent {
        AuditEvent(
            id: try row.decode(column: "id", as: String.self),
            occurredAt: Date(millisecondsSince1970: try row.decode(column: "occurred_at", as: Int64.self)),
            kind: try row.decode(column: "kind", as: String.self),
            succeeded: try row.decode(column: "outcome", as: String.self) == "success",
            accountID: try row.decode(column: "account_id", as: String?.self),
            deviceID: try row.decode(column: "device_id", as: String?.self),
            sessionID: try row.decode(column: "session_id", as: String?.self),
            code: try row.decode(column: "code", as: String?.self),
            operatorID: try row.decode(column: "operator_id", as: String?.self),
            reason: try row.decode(column: "reason", as: String?.self),
            passkeyID: try row.decode(column: "passkey_id", as: String?.self),
            paymentID: try row.decode(column: "payment_id", as: String?.self),
            clientID: try row.decode(column: "client_id", as: String?.self),
            clientAddress: try row.decode(column: "client_address", as: String?.self),
            userAgent: try row.decode(column: "user_agent", as: String?.self)
        )
    }

    /// A page of the account's events, newest first: at most `limit`, older than `before` when given, and the cursor of
    /// the next page when there may be one.
    func page(account: String, limit: Int, before: AuditCursor?) async throws -> (events: [AuditEvent], next: AuditCursor?) {
        // Keyset pagination in the order of the listing: stable while new events arrive.
        let older: SQLQueryString =
            before.map { "AND (occurred_at < \(bind: $0.occurredAt) OR (occurred_at = \(bind: $0.occurredAt) AND sequence < \(bind: $0.sequence)))" }
            ?? ""
        let rows = try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM audit_events WHERE account_id = \(bind: account) \(older)
            ORDER BY occurred_at DESC, sequence DESC LIMIT \(literal: limit + 1)
            """
        ).all()
        let events = try rows.prefix(limit).map(Self.event)
        guard rows.count > limit, let last = rows.prefix(limit).last else { return (events, nil) }
        let next = AuditCursor(
            occurredAt: try last.decode(column: "occurred_at", as: Int64.self),
            sequence: try last.decode(column: "sequence", as: Int64.self)
        )
        return (events, next)
    }

    /// The kinds of operators' lifecycle events, as the partial index `audit_events_operator_changes` (migration 17)
    /// names them: a query must spell the same list for the index to serve it.
    static let operatorChangeKinds =
        "('operator_created', 'operator_disabled', 'operator_enabled', 'operator_role_changed', 'operator_password_reset', 'operator_totp_reset', 'operator_password_changed')"

    /// The `limit` most recent operator lifecycle events, newest first, read from their partial index.
    func operatorChanges(limit: Int) async throws -> [AuditEvent] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM audit_events
            WHERE kind IN \(unsafeRaw: Self.operatorChangeKinds) ORDER BY occurred_at DESC, sequence DESC LIMIT \(literal: limit)
            """
        ).all().map(Self.event)
    }

    /// Every event of payment `id`, oldest first.
    func forPayment(_ id: String) async throws -> [AuditEvent] {
        try await db.raw(
            "SELECT \(unsafeRaw: Self.columns) FROM audit_events WHERE payment_id = \(bind: id) ORDER BY occurred_at, sequence"
        ).all().map(Self.event)
    }

    /// The kinds of event that start a session, each naming the session it started.
    static let sessionStartKinds = "('password_sign_in', 'biometric_sign_in', 'passkey_sign_in', 'approval_sign_in')"

    /// One count of ``signInCounts(since:hour:)``.
    struct SignInCount: Sendable {
        /// The hour from `from`.
        var bucket: Int
        var kind: String
        var succeeded: Bool
        /// Whether a service client asked (a CIBA sign-in), not a web page's QR code, for `approval_sign_in`.
        var viaClient: Bool
        var count: Int
    }

    /// Sign-in events since `from` (milliseconds) counted by hour (from `from`), kind, outcome and whether a service
    /// client asked for them.
    func signInCounts(since from: Int64, hour: Int64) async throws -> [SignInCount] {
        try await db.raw(
            """
            SELECT (occurred_at - \(bind: from)) / \(bind: hour) AS bucket, kind, outcome,
                CASE WHEN client_id IS NULL THEN 0 ELSE 1 END AS via_client, COUNT(*) AS n FROM audit_events
            WHERE occurred_at >= \(bind: from) AND kind IN \(unsafeRaw: Self.sessionStartKinds) GROUP BY 1, 2, 3, 4
            """
        ).all().map { row in
            SignInCount(
                bucket: Int(try row.decode(column: "bucket", as: Int64.self)),
                kind: try row.decode(column: "kind", as: String.self),
                succeeded: try row.decode(column: "outcome", as: String.self) == "success",
                viaClient: try row.decode(column: "via_client", as: Int.self) != 0,
                count: try row.decode(column: "n", as: Int.self)
            )
        }
    }

    /// Approval events (`approval_requested`, `_approved`, `_denied`, `_expired`) since `from`, counted by kind and
    /// whether a service client asked (CIBA) or a web page's QR code was scanned.
    func approvalCounts(since from: Int64) async throws -> [(kind: String, viaClient: Bool, count: Int)] {
        try await db.raw(
            """
            SELECT kind, CASE WHEN client_id IS NULL THEN 0 ELSE 1 END AS via_client, COUNT(*) AS n FROM audit_events
            WHERE occurred_at >= \(bind: from) AND outcome = 'success'
                AND kind IN ('approval_requested', 'approval_approved', 'approval_denied', 'approval_expired')
            GROUP BY 1, 2
            """
        ).all().map { row in
            (
                try row.decode(column: "kind", as: String.self), try row.decode(column: "via_client", as: Int.self) != 0,
                try row.decode(column: "n", as: Int.self)
            )
        }
    }

    /// Where each of the account's `sessions` was opened: the address and `User-Agent` of the sign-in event that
    /// started it, by session id (a session whose event retention purged is absent). Read through the account's index.
    func sessionStarts(account: String, sessions: [String]) async throws -> [String: (address: String?, userAgent: String?)] {
        guard !sessions.isEmpty else { return [:] }
        let rows = try await db.raw(
            """
            SELECT session_id, client_address, user_agent FROM audit_events
            WHERE account_id = \(bind: account) AND session_id IN (\(binds: sessions)) AND outcome = 'success' AND kind IN \(unsafeRaw: Self.sessionStartKinds)
            """
        ).all()
        var starts: [String: (address: String?, userAgent: String?)] = [:]
        for row in rows {
            starts[try row.decode(column: "session_id", as: String.self)] = (
                try row.decode(column: "client_address", as: String?.self), try row.decode(column: "user_agent", as: String?.self)
            )
        }
        return starts
    }

    /// Failed events of any kind since `from` counted by problem code, most first, at most `limit`.
    func failureCounts(since from: Int64, limit: Int) async throws -> [(code: String, count: Int)] {
        try await db.raw(
            """
            SELECT code, COUNT(*) AS n FROM audit_events WHERE occurred_at >= \(bind: from) AND outcome = 'failure' AND code IS NOT NULL
            GROUP BY code ORDER BY n DESC, code LIMIT \(literal: limit)
            """
        ).all().map { (try $0.decode(column: "code", as: String.self), try $0.decode(column: "n", as: Int.self)) }
    }

    // SQLite runs one transaction at a time, so MAX + 1 (in the INSERT itself) gives a gapless order; PostgreSQL
    // takes the number from a sequence (increasing, with gaps where a transaction rolled back or was retried).
    static let insertSQLite = FixedSQL(
        """
        INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code, client_id, operator_id, reason, passkey_id, \
        payment_id, client_address, user_agent) VALUES (?, ?, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM audit_events), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    )
    static let insertPostgres = FixedSQL(
        """
        INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code, client_id, operator_id, reason, passkey_id, \
        payment_id, client_address, user_agent) VALUES (?, ?, nextval('audit_events_sequence'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    )

    /// Run on every sign-in and payment (SQLite's form; PostgreSQL's takes a sequence): `QueryPlanTests` checks that its
    /// `MAX(sequence)` reads the sequence index, not the table.
    static let hotStatements: [FixedStatement] = [
        insertSQLite(
            "e",
            Int64(1),
            "biometric_sign_in",
            "success",
            "a",
            "d",
            "s",
            nil as String?,
            nil as String?,
            nil as String?,
            nil as String?,
            nil as String?,
            nil as String?,
            nil as String?,
            nil as String?
        )
    ]

    /// PostgreSQL's form of the same insert, with the same sample values.
    static var postgresHotStatements: [FixedStatement] { hotStatements.map { FixedStatement(sql: insertPostgres, binds: $0.binds) } }
}

// MARK: Retention

extension AuditEventsTable {
    /// Events that occurred before `cutoff`.
    static func purge(before cutoff: Int64) -> PurgeRule { PurgeRule(table: "audit_events", key: "id", condition: "occurred_at < \(bind: cutoff)") }
}
