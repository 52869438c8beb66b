import BioAuthCore
import Foundation
import Logging
import SQLKit

/// What every change leaves behind in its own unit of work: the audit event, and the webhook event in the outbox. Also
/// the changes that both the customer's requests and the support desk make (revoking a device or a passkey, cancelling
/// a payment, ending sessions), so both leave the same trail.
///
/// Its dependencies are narrow (clock, randomness, the engine, the webhook retry window, a logger), so the support desk
/// of `bioauth admin` records support actions without building a ``BioAuthService``.
struct ChangeRecorder: Sendable {
    let clock: any WallClock
    let random: any RandomSource
    let dialect: DatabaseDialect
    /// How long a webhook event is tried before it is given up.
    let webhookRetryWindow: TimeInterval
    let logger: Logger
    /// Who asked for the changes recorded: their address and `User-Agent` go into each audit event.
    var caller = Caller.none

    var now: Date { clock.now }

    /// The recorder of work outside the server (`bioauth admin`, the administration types it uses): the audit trail of
    /// its changes. It emits no webhook events.
    static func outsideTheServer(database: any DatabaseExecutor, clock: any WallClock, random: any RandomSource) -> ChangeRecorder {
        ChangeRecorder(
            clock: clock,
            random: random,
            dialect: database.dialect,
            webhookRetryWindow: WebhookPolicy().retryWindow,
            logger: Logger(label: "bioauth-admin")
        )
    }

    /// A new row identifier (account, device, session, challenge, payment, audit event).
    ///
    /// On SQLite it is time-ordered, so each new row's entry goes at the end of its primary-key index instead of
    /// onto a random page, and a group commit writes fewer pages. On PostgreSQL it is random: there, under
    /// `SERIALIZABLE`, transactions reading and inserting on the same index page conflict, and time-ordered keys
    /// put every new row on the same page (far more retries). Measurements: docs/PERFORMANCE.md. Neither is a
    /// secret: every lookup is by account too, or needs a signature, and the time a time-ordered one reveals the API
    /// shows anyway.
    func newID() -> String {
        dialect == .postgres ? random.newRandomID() : random.newTimeOrderedID(at: now)
    }

    /// Appends an audit event in the current transaction, and logs it once the transaction commits (``CommittedLog``).
    /// Events carry ids and codes, never secrets.
    func audit(
        _ kind: AuditKind,
        succeeded: Bool,
        account: String?,
        device: String? = nil,
        session: String? = nil,
        client: String? = nil,
        code: String? = nil,
        operator: SupportAction? = nil,
        passkey: String? = nil,
        payment: String? = nil,
        on db: any SQLDatabase
    ) async throws {
        try await db.auditEvents.insert(
            AuditEvent(
                id: newID(),
                occurredAt: now,
                kind: kind.rawValue,
                succeeded: succeeded,
                accountID: account,
                deviceID: device,
                sessionID: session,
                code: code,
                operatorID: `operator`?.operatorID,
                reason: `operator`?.reason,
                passkeyID: passkey,
                paymentID: payment,
                clientAddress: caller.address,
                userAgent: caller.userAgent
            ),
            clientID: client,
            engine: dialect
        )
        let metadata: Logger.Metadata = [
            "kind": "\(kind.rawValue)", "outcome": "\(succeeded ? "success" : "failure")", "account": "\(account ?? "-")",
            "client": "\(client ?? "-")", "code": "\(code ?? "-")", "operator": "\(`operator`?.operatorID ?? "-")",
        ]
        // Once the event is committed, and only then (a unit of work rolled back and run again would tell it twice).
        CommittedLog.write { [logger] in logger.info("audit", metadata: metadata) }
    }

    /// Writes `type` into the outbox in the caller's transaction, with one delivery for each live endpoint that asked for
    /// it: the event exists exactly when the change that caused it commits. Nothing is written when no endpoint wants it.
    func emit(_ type: WebhookEventType, _ data: WebhookEventBody.EventData, on db: any SQLDatabase) async throws {
        let at = now
        let id = "evt_" + newID()
        let giveUp = at.addingTimeInterval(webhookRetryWindow).millisecondsSince1970
        try await db.webhooks.enqueueForLiveEndpoints(
            eventID: id,
            type: type.rawValue,
            body: {
                let event = WebhookEventBody(id: id, type: type.rawValue, createdAt: try InternetDateTime().encode(at), data: data)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                return String(decoding: try encoder.encode(event), as: UTF8.self)
            },
            subject: data.paymentId ?? data.passkeyId ?? data.approvalId ?? data.deviceId,
            at: at.millisecondsSince1970,
            giveUpAt: giveUp,
            engine: dialect
        )
    }

    // MARK: Changes the customer and the support desk share

    /// Ends the account's live sessions, all of them or those of one installation or one device, except `keeping`.
    func endSessions(
        account: String,
        installationID: String? = nil,
        device: String? = nil,
        keeping: String? = nil,
        reason: String,
        on db: any SQLDatabase
    ) async throws {
        try await db.accounts.guardSessions(account: account, engine: dialect)
        try await db.sessions.endLive(
            account: account,
            installationID: installationID,
            device: device,
            keeping: keeping,
            reason: reason,
            at: now.millisecondsSince1970
        )
    }

    /// Ends the account's session `id` if it is live: whether it was.
    func endSession(_ id: String, account: String, reason: String, on db: any SQLDatabase) async throws -> Bool {
        try await db.accounts.guardSessions(account: account, engine: dialect)
        return try await db.sessions.endLive(id, account: account, reason: reason, at: now.millisecondsSince1970)
    }

    /// Revokes `device`: its key is refused from now on, its sessions end except `keeping` (the customer's own session
    /// asking), and it is audited (with the operator for a support action) and sent to the bank's webhooks.
    func revoke(_ device: DeviceInfo, keeping session: String?, by action: SupportAction? = nil, on db: any SQLDatabase) async throws {
        try await db.devices.markRevoked(device.id, at: now.millisecondsSince1970)
        try await endSessions(
            account: device.accountID,
            installationID: device.installationID,
            device: device.id,
            keeping: session,
            reason: "device_revoked",
            on: db
        )
        try await audit(.deviceRevoked, succeeded: true, account: device.accountID, device: device.id, session: session, operator: action, on: db)
        try await emit(.deviceRevoked, .init(device: device), on: db)
    }

    /// Revokes `passkey`: it signs in no more, the sessions it started end except `keeping`, and it is audited (with the
    /// operator for a support action) and sent to the bank's webhooks.
    func revoke(_ passkey: PasskeyInfo, keeping session: String?, by action: SupportAction? = nil, on db: any SQLDatabase) async throws {
        try await db.passkeys.markRevoked(passkey.id, at: now.millisecondsSince1970)
        try await db.accounts.guardSessions(account: passkey.accountID, engine: dialect)
        try await db.sessions.endLive(passkey: passkey.id, keeping: session, reason: "passkey_revoked", at: now.millisecondsSince1970)
        try await audit(.passkeyRevoked, succeeded: true, account: passkey.accountID, session: session, operator: action, passkey: passkey.id, on: db)
        try await emit(.passkeyRevoked, .init(passkey: passkey), on: db)
    }

    /// Cancels the pending `payment`, audited (with the operator for a support action) and sent to the bank's webhooks as
    /// `payment.cancelled`.
    func cancel(_ payment: PaymentInfo, session: String?, by action: SupportAction? = nil, on db: any SQLDatabase) async throws -> PaymentInfo {
        try await db.payments.markCancelled(payment.id)
        var cancelled = payment
        cancelled.status = .cancelled
        try await audit(
            .paymentCancelled,
            succeeded: true,
            account: payment.accountID,
            session: session,
            operator: action,
            payment: payment.id,
            on: db
        )
        try await emit(.paymentCancelled, .init(payment: cancelled), on: db)
        return cancelled
    }

    /// Marks a pending payment past its time as expired, once (the status condition makes a second instance's attempt a
    /// no-op), and writes `payment.expired`. Returns whether this call moved it.
    @discardableResult
    func expire(_ payment: PaymentInfo, on db: any SQLDatabase) async throws -> Bool {
        guard try await db.payments.markExpired(payment.id, now: now.millisecondsSince1970) else { return false }
        var expired = payment
        expired.status = .expired
        try await emit(.paymentExpired, .init(payment: expired), on: db)
        return true
    }

    /// Marks a pending approval request past its time as expired, once (the status condition makes another instance's
    /// attempt a no-op), audited and sent as `approval.expired`. Returns whether this call moved it.
    @discardableResult
    func expire(_ approval: ApprovalInfo, on db: any SQLDatabase) async throws -> Bool {
        guard try await db.approvals.markExpired(approval.id, now: now.millisecondsSince1970) else { return false }
        try await audit(.approvalExpired, succeeded: true, account: approval.accountID, client: approval.clientID, on: db)
        var expired = approval
        expired.status = .expired
        try await emit(.approvalExpired, .init(approval: expired), on: db)
        try await settled(expired, on: db)
        return true
    }

    /// The request reached its outcome: a ping-mode client's ping is due now (``WebhookDispatcher`` sends it).
    func settled(_ approval: ApprovalInfo, on db: any SQLDatabase) async throws {
        guard approval.deliveryMode == .ping else { return }
        try await db.cibaPings.markDue(approval.id, at: now.millisecondsSince1970)
    }
}
