import Foundation
import SQLKit

/// A security event's kind, as stored and as `GET /v1/audit` shows it.
enum AuditKind: String, Sendable {
    case accountCreated = "account_created"
    case passwordSignIn = "password_sign_in"
    case accountLocked = "account_locked"
    case passwordChanged = "password_changed"
    case signOut = "sign_out"
    case refreshTokenReuse = "refresh_token_reuse"
    case deviceRegistered = "device_registered"
    case deviceRevoked = "device_revoked"
    case biometricSignIn = "biometric_sign_in"
    case challengeReplay = "challenge_replay"
    case counterRegression = "counter_regression"
    case paymentCreated = "payment_created"
    case paymentAuthorized = "payment_authorized"
    case paymentCancelled = "payment_cancelled"
    case paymentLocked = "payment_locked"
    case paymentPINSet = "payment_pin_set"
    case paymentPINLocked = "payment_pin_locked"
    case appAttestation = "app_attestation"
    case appAssertion = "app_assertion"
    case serviceTokenIssued = "service_token_issued"
    case payeeRegistered = "payee_registered"
    case webhookEndpointCreated = "webhook_endpoint_created"
    case webhookEndpointDeleted = "webhook_endpoint_deleted"
    case webhookSecretRotated = "webhook_secret_rotated"
    case sessionsEnded = "sessions_ended"
    case accountUnlocked = "account_unlocked"
    case paymentPINUnlocked = "payment_pin_unlocked"
    case operatorCreated = "operator_created"
    case operatorDisabled = "operator_disabled"
    case serviceClientDisabled = "service_client_disabled"
    case passkeyRegistered = "passkey_registered"
    case passkeySignIn = "passkey_sign_in"
    case passkeyRevoked = "passkey_revoked"
}

/// One row of the audit log.
struct AuditEvent: Sendable, Equatable {
    var id: String
    var occurredAt: Date
    var kind: String
    var succeeded: Bool
    var accountID: String?
    var deviceID: String?
    var sessionID: String?
    var code: String?
    /// The operator who did it, for a support action.
    var operatorID: String? = nil
    /// The operator's reason, for a support action.
    var reason: String? = nil
    /// The passkey, for a passkey's registration, sign-in or revocation.
    var passkeyID: String? = nil
}

extension BioAuthService {
    /// Appends an event in the current transaction. Events carry ids and codes, never secrets.
    func audit(
        _ kind: AuditKind, succeeded: Bool, account: String?, device: String? = nil, session: String? = nil,
        client: String? = nil, code: String? = nil, operator: SupportAction? = nil, passkey: String? = nil, on db: any SQLDatabase
    ) async throws {
        let insert = database.dialect == .postgres ? Self.insertAuditEventPostgres : Self.insertAuditEventSQLite
        try await db.run(
            insert(
                newID(), now.millisecondsSince1970, kind.rawValue, succeeded ? "success" : "failure", account, device, session, code, client,
                `operator`?.operatorID, `operator`?.reason, passkey))
        logger.info(
            "audit", metadata: ["kind": "\(kind.rawValue)", "outcome": "\(succeeded ? "success" : "failure")",
                                "account": "\(account ?? "-")", "client": "\(client ?? "-")", "code": "\(code ?? "-")",
                                "operator": "\(`operator`?.operatorID ?? "-")"])
    }

    // SQLite runs one transaction at a time, so MAX + 1 (in the INSERT itself) gives a gapless order; PostgreSQL
    // takes the number from a sequence (increasing, with gaps where a transaction rolled back or was retried).
    private static let insertAuditEventSQLite = FixedSQL(
        """
        INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code, client_id, operator_id, reason, passkey_id) \
        VALUES (?, ?, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM audit_events), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    private static let insertAuditEventPostgres = FixedSQL(
        """
        INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code, client_id, operator_id, reason, passkey_id) \
        VALUES (?, ?, nextval('audit_events_sequence'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)

    /// A page of the account's own events, newest first: at most `limit`, older than `before` when given, and the
    /// cursor of the next page when there may be one.
    func auditEvents(account: String, limit: Int, before: AuditCursor? = nil) async throws -> (events: [AuditEvent], next: AuditCursor?) {
        try await database.transaction { db in
            var query = db.select()
                .columns("id", "occurred_at", "sequence", "kind", "outcome", "account_id", "device_id", "session_id", "code", "operator_id", "reason", "passkey_id")
                .from("audit_events")
                .where("account_id", .equal, account)
            if let before {
                // Keyset pagination in the order of the listing: stable while new events arrive.
                query = query.where { group in
                    group.where("occurred_at", .lessThan, before.occurredAt)
                        .orWhere { $0.where("occurred_at", .equal, before.occurredAt).where("sequence", .lessThan, before.sequence) }
                }
            }
            let rows = try await query
                .orderBy("occurred_at", .descending)
                .orderBy("sequence", .descending)
                .limit(limit + 1)
                .all()
            let events = try rows.prefix(limit).map { row in
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
                    passkeyID: try row.decode(column: "passkey_id", as: String?.self))
            }
            guard rows.count > limit, let last = rows.prefix(limit).last else { return (events, nil) }
            let next = AuditCursor(
                occurredAt: try last.decode(column: "occurred_at", as: Int64.self), sequence: try last.decode(column: "sequence", as: Int64.self))
            return (events, next)
        }
    }
}

/// Where a page of the audit log ends: the last event's time (milliseconds) and sequence number, as `MS.SEQUENCE`.
struct AuditCursor: Sendable, Equatable {
    var occurredAt: Int64
    var sequence: Int64

    init(occurredAt: Int64, sequence: Int64) {
        self.occurredAt = occurredAt
        self.sequence = sequence
    }

    /// A cursor a client sent back; anything else than `MS.SEQUENCE` is `malformed_request`.
    init(parsing text: String) throws {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...19).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let occurredAt = Int64(parts[0]), let sequence = Int64(parts[1])
        else { throw APIError(.malformedRequest, "before is not a cursor this server gave.") }
        self.init(occurredAt: occurredAt, sequence: sequence)
    }

    var text: String { "\(occurredAt).\(sequence)" }
}
