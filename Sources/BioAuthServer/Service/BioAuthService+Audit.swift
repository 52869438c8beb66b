import Foundation
import SQLKit

/// A security event's kind, as stored and as `GET /v1/audit` shows it.
enum AuditKind: String, Sendable, CaseIterable {
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
    /// One session ended by support (its id in the event).
    case sessionEnded = "session_ended"
    case accountUnlocked = "account_unlocked"
    case paymentPINUnlocked = "payment_pin_unlocked"
    case operatorCreated = "operator_created"
    case operatorDisabled = "operator_disabled"
    case operatorEnabled = "operator_enabled"
    case operatorPasswordChanged = "operator_password_changed"
    case operatorPasswordReset = "operator_password_reset"
    case operatorTOTPReset = "operator_totp_reset"
    case operatorRoleChanged = "operator_role_changed"
    case serviceClientDisabled = "service_client_disabled"
    /// A service client made (`bioauth admin service create`).
    case serviceClientCreated = "service_client_created"
    /// A service client's display name, notification endpoint or secrets changed (the reason says which).
    case serviceClientChanged = "service_client_changed"
    /// The receipt-signing key rotated (`bioauth admin receipt-key rotate`).
    case receiptKeyRotated = "receipt_key_rotated"
    case passkeyRegistered = "passkey_registered"
    case passkeySignIn = "passkey_sign_in"
    case passkeyRevoked = "passkey_revoked"
    case approvalRequested = "approval_requested"
    case approvalApproved = "approval_approved"
    case approvalDenied = "approval_denied"
    case approvalExpired = "approval_expired"
    /// A sign-in on another channel, approved on the phone, handed to its client as a session.
    case approvalSignIn = "approval_sign_in"
    /// A binding code the bank's backend asked for (never the code; `recovery` for a lost phone's).
    case bindingCodeIssued = "binding_code_issued"
    /// A lost phone's code bound a new device: every other device, passkey and session of the account ended with it.
    case accountRecovered = "account_recovered"
    /// A password reset code the bank's backend asked for (never the code).
    case passwordResetCodeIssued = "password_reset_code_issued"
    /// A password set with a reset code (forgot password): every session of the account ended.
    case passwordReset = "password_reset"
    /// A session raised by a fresh device-key signature (a step-up), with its device and session (the session row keeps
    /// the action it is for); refused proofs too.
    case stepUp = "step_up"
    /// A new set of the customer's own recovery codes (never the codes); the set before is void.
    case recoveryCodesCreated = "recovery_codes_created"
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
    /// The payment, for a payment's creation, authorization (or failed attempt), lock or cancellation.
    var paymentID: String? = nil
    /// The service client whose request it was (stored from the insert's `clientID`), when read back.
    var clientID: String? = nil
    /// The address the request came from (as rate limits count it), when it came over HTTP.
    var clientAddress: String? = nil
    /// The request's `User-Agent` (``ClientAddress/userAgent``).
    var userAgent: String? = nil
}

extension BioAuthService {
    /// A page of the account's own events, newest first: at most `limit`, older than `before` when given, and the
    /// cursor of the next page when there may be one.
    func auditEvents(account: String, limit: Int, before: AuditCursor? = nil) async throws -> (events: [AuditEvent], next: AuditCursor?) {
        try await database.transaction { db in try await db.auditEvents.page(account: account, limit: limit, before: before) }
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
