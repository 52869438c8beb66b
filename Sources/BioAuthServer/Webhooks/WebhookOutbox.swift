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
    case accountRecovered = "account.recovered"
    case accountPasswordReset = "account.password_reset"
    case approvalRequested = "approval.requested"
    case approvalApproved = "approval.approved"
    case approvalDenied = "approval.denied"
    case approvalExpired = "approval.expired"
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
        var payeeVerified: Bool?
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
        var approvalId: String?
        var approvalKind: String?
        var requester: String?
        var clientId: String?
        var bindingMessage: String?
        var expiresAt: String?
        var denyReason: String?
        var signedApproval: SignedApproval?
        /// How a registered device was bound: `password`, `approval` or `binding_code`.
        var boundBy: String?
        /// When a device bound by a password alone leaves its cooling-off.
        var coolingOffUntil: String?
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
            accountId: payment.accountID,
            paymentId: payment.id,
            status: payment.status.rawValue,
            amountMinor: payment.amountMinor,
            currency: payment.currency,
            payeeId: payment.payeeID,
            payeeName: payment.payeeName,
            payeeVerified: payment.payeeVerified,
            memo: payment.memo,
            authorizationMethod: payment.authorizationMethod,
            authorizedAt: payment.authorizedAt.flatMap { try? time.encode($0) },
            receipt: payment.receipt,
            deviceId: payment.deviceID
        )
    }

    /// An approval event's data: who is asked, what for and by whom, and the outcome. Never the number a sign-in shows,
    /// nor the challenge: `approval.requested` carries what a push notification needs, and no secret.
    init(approval: ApprovalInfo) {
        let time = InternetDateTime()
        self.init(
            accountId: approval.accountID,
            status: approval.status.rawValue,
            deviceId: approval.deviceID,
            approvalId: approval.id,
            approvalKind: approval.kind.rawValue,
            requester: approval.requester,
            clientId: approval.clientID,
            bindingMessage: approval.bindingMessage,
            expiresAt: try? time.encode(approval.expiresAt),
            denyReason: approval.denyReason,
            signedApproval: approval.signedApproval
        )
    }

    /// A device event's data.
    init(device: DeviceInfo) {
        self.init(
            accountId: device.accountID,
            deviceId: device.id,
            biometryKind: device.biometryKind.rawValue,
            deviceName: device.name,
            boundBy: device.boundBy.rawValue,
            coolingOffUntil: device.coolingOffUntil.flatMap { try? InternetDateTime().encode($0) }
        )
    }

    /// A passkey event's data: which passkey, its name, and whether it is synced (backup eligible).
    init(passkey: PasskeyInfo) {
        self.init(accountId: passkey.accountID, passkeyId: passkey.id, passkeyName: passkey.name, backupEligible: passkey.backupEligible)
    }
}
