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
}

extension BioAuthService {
    /// Appends an event in the current transaction. Events carry ids and codes, never secrets.
    func audit(
        _ kind: AuditKind, succeeded: Bool, account: String?, device: String? = nil, session: String? = nil,
        code: String? = nil, on db: any SQLDatabase
    ) async throws {
        let insert = database.dialect == .postgres ? Self.insertAuditEventPostgres : Self.insertAuditEventSQLite
        try await db.run(
            insert(newID(), now.millisecondsSince1970, kind.rawValue, succeeded ? "success" : "failure", account, device, session, code))
        logger.info(
            "audit", metadata: ["kind": "\(kind.rawValue)", "outcome": "\(succeeded ? "success" : "failure")",
                                "account": "\(account ?? "-")", "code": "\(code ?? "-")"])
    }

    // SQLite runs one transaction at a time, so MAX + 1 (in the INSERT itself) gives a gapless order; PostgreSQL
    // takes the number from a sequence (increasing, with gaps where a transaction rolled back or was retried).
    private static let insertAuditEventSQLite = FixedSQL(
        """
        INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code) \
        VALUES (?, ?, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM audit_events), ?, ?, ?, ?, ?, ?)
        """)
    private static let insertAuditEventPostgres = FixedSQL(
        """
        INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id, session_id, code) \
        VALUES (?, ?, nextval('audit_events_sequence'), ?, ?, ?, ?, ?, ?)
        """)

    /// The account's own events, newest first.
    func auditEvents(account: String, limit: Int) async throws -> [AuditEvent] {
        try await database.transaction { db in
            try await db.select()
                .columns("id", "occurred_at", "kind", "outcome", "account_id", "device_id", "session_id", "code")
                .from("audit_events")
                .where("account_id", .equal, account)
                .orderBy("occurred_at", .descending)
                .orderBy("sequence", .descending)
                .limit(limit)
                .all()
                .map { row in
                    AuditEvent(
                        id: try row.decode(column: "id", as: String.self),
                        occurredAt: Date(millisecondsSince1970: try row.decode(column: "occurred_at", as: Int64.self)),
                        kind: try row.decode(column: "kind", as: String.self),
                        succeeded: try row.decode(column: "outcome", as: String.self) == "success",
                        accountID: try row.decode(column: "account_id", as: String?.self),
                        deviceID: try row.decode(column: "device_id", as: String?.self),
                        sessionID: try row.decode(column: "session_id", as: String?.self),
                        code: try row.decode(column: "code", as: String?.self))
                }
        }
    }
}
