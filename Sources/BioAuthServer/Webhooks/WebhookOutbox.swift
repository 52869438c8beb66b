import BioAuthCore
import Foundation
import SQLKit

/// The events a webhook endpoint can ask for.
enum WebhookEventType: String, CaseIterable, Sendable {
    case paymentAuthorized = "payment.authorized"
    case paymentCancelled = "payment.cancelled"
    case paymentExpired = "payment.expired"
    case paymentLocked = "payment.locked"
    case deviceRegistered = "device.registered"
    case deviceRevoked = "device.revoked"
    case passkeyRegistered = "passkey.registered"
    case passkeyRevoked = "passkey.revoked"
    case accountLocked = "account.locked"
}

/// The body of one event, as delivered: `{"createdAt", "data", "id", "type"}` with sorted keys. Absent members are left
/// out, never `null`.
struct WebhookEventBody: Encodable, Sendable {
    /// What happened to whom. Payment events carry the payment; device events the device; passkey events the passkey;
    /// `account.locked` the lock.
    struct EventData: Encodable, Sendable {
        var accountId: String
        var paymentId: String?
        var status: String?
        var amountMinor: Int64?
        var currency: String?
        var payeeId: String?
        var payeeName: String?
        var memo: String?
        var authorizationMethod: String?
        var authorizedAt: String?
        var receipt: PaymentReceipt?
        var deviceId: String?
        var biometryKind: String?
        var deviceName: String?
        var passkeyId: String?
        var passkeyName: String?
        var backupEligible: Bool?
        var lockedUntil: String?
    }

    var id: String
    var type: String
    var createdAt: String
    var data: EventData
}

extension WebhookEventBody.EventData {
    /// A payment event's data: the payment as it now stands.
    init(payment: PaymentInfo) {
        let time = InternetDateTime()
        self.init(
            accountId: payment.accountID, paymentId: payment.id, status: payment.status.rawValue, amountMinor: payment.amountMinor,
            currency: payment.currency, payeeId: payment.payeeID, payeeName: payment.payeeName, memo: payment.memo,
            authorizationMethod: payment.authorizationMethod, authorizedAt: payment.authorizedAt.flatMap { try? time.encode($0) },
            receipt: payment.receipt, deviceId: payment.deviceID)
    }

    /// A device event's data.
    init(device: DeviceInfo) {
        self.init(accountId: device.accountID, deviceId: device.id, biometryKind: device.biometryKind.rawValue, deviceName: device.name)
    }

    /// A passkey event's data: which passkey, its name, and whether it is synced (backup eligible).
    init(passkey: PasskeyInfo) {
        self.init(accountId: passkey.accountID, passkeyId: passkey.id, passkeyName: passkey.name, backupEligible: passkey.backupEligible)
    }
}

extension BioAuthService {
    /// Writes `type` into the outbox in the caller's transaction, with one delivery for each live endpoint that asked for
    /// it: the event exists exactly when the change that caused it commits. Nothing is written when no endpoint wants it.
    func emit(_ type: WebhookEventType, _ data: WebhookEventBody.EventData, on db: any SQLDatabase) async throws {
        let endpoints = try await db.raw("SELECT id, events FROM webhook_endpoints WHERE deleted_at IS NULL").all().compactMap { row in
            let events = try row.decode(column: "events", as: String.self).split(separator: " ")
            return events.contains(Substring(type.rawValue)) ? try row.decode(column: "id", as: String.self) : nil
        }
        guard !endpoints.isEmpty else { return }
        let at = now
        let event = WebhookEventBody(id: "evt_" + newID(), type: type.rawValue, createdAt: try InternetDateTime().encode(at), data: data)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let body = String(data: try encoder.encode(event), encoding: .utf8) else { throw APIError.internalError }
        let created = at.millisecondsSince1970
        let giveUp = at.addingTimeInterval(configuration.webhooks.retryWindow).millisecondsSince1970
        try await db.raw(
            "INSERT INTO webhook_events (id, type, created_at, body) VALUES (\(bind: event.id), \(bind: type.rawValue), \(bind: created), \(bind: body))"
        ).run()
        for endpoint in endpoints {
            try await db.raw(
                """
                INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at, give_up_at, created_at)
                VALUES (\(bind: event.id), \(bind: endpoint), 'pending', 0, \(bind: created), \(bind: giveUp), \(bind: created))
                """
            ).run()
        }
    }

    /// Marks a pending payment past its time as expired, once (the status condition makes a second instance's attempt a
    /// no-op), and writes `payment.expired`. Returns whether this call moved it.
    @discardableResult
    func expire(_ payment: PaymentInfo, on db: any SQLDatabase) async throws -> Bool {
        let moved = try await db.raw(
            """
            UPDATE payments SET status = 'expired' WHERE id = \(bind: payment.id) AND status = 'pending'
                AND expires_at <= \(bind: now.millisecondsSince1970) RETURNING id
            """
        ).all()
        guard !moved.isEmpty else { return false }
        var expired = payment
        expired.status = .expired
        try await emit(.paymentExpired, .init(payment: expired), on: db)
        return true
    }
}
