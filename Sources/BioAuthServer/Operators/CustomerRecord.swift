import BioAuthCore
import Foundation

/// What an operator sees of a customer: the account and its locks, devices, passkeys, live sessions, recent payments and the
/// security timeline (audit events). Never a password hash, token, PIN hash or key.
public struct CustomerRecord: Sendable {
    /// A device key bound to the account.
    public struct Device: Sendable {
        /// The device id.
        public let id: String
        /// The name the phone gave itself.
        public let name: String
        /// `faceID`, `touchID` or `opticID`.
        public let biometryKind: String
        /// `apple-appattest` when App Attest backed the key, else `none`.
        public let attestation: String
        /// When it was registered.
        public let createdAt: Date
        /// When its key last signed in or paid.
        public let lastUsedAt: Date?
        /// When it was revoked, if it was.
        public let revokedAt: Date?
        /// What bound it beyond the password: `password`, `approval` or `binding_code`.
        public let boundBy: String
        /// Until when it is in its cooling-off, while it is (bound by a password alone).
        public let coolingOffUntil: Date?
    }
    /// A passkey of the account.
    public struct Passkey: Sendable {
        /// The passkey id.
        public let id: String
        /// The name the customer gave it.
        public let name: String
        /// A synced (multi-device) passkey.
        public let backupEligible: Bool
        /// The attestation format it was registered with (`none` for synced passkeys).
        public let attestationFormat: String
        /// Whether its attestation led to a configured root.
        public let attestationTrusted: Bool
        /// When it was registered.
        public let createdAt: Date
        /// When it last signed in.
        public let lastUsedAt: Date?
        /// When it was revoked, if it was.
        public let revokedAt: Date?
    }
    /// A live session.
    public struct Session: Sendable {
        /// The session id.
        public let id: String
        /// The app installation it belongs to.
        public let installationID: String
        /// `password`, `biometric`, `passkey` or `approval` (approved on the phone: a service client's or a QR code's).
        public let method: String
        /// The device whose key opened it, for a biometric sign-in.
        public let deviceID: String?
        /// The passkey that opened it, for a passkey sign-in.
        public let passkeyID: String?
        /// When it began.
        public let createdAt: Date
        /// The address its sign-in came from (as rate limits count it: IPv6 by its /64), when known.
        public var clientAddress: String? = nil
        /// The `User-Agent` of its sign-in, when it sent one.
        public var userAgent: String? = nil
    }
    /// A payment, as the server stores it (a pending one past its expiry shows as expired).
    public struct Payment: Sendable {
        /// The payment id.
        public let id: String
        /// The amount (nil only for a currency no longer known).
        public let amount: Money?
        /// The registered payee's id.
        public let payeeID: String
        /// The name the prompt showed.
        public let payeeName: String
        /// `pending`, `authorized`, `cancelled`, `expired` or `locked`.
        public let status: String
        /// When it was asked for.
        public let createdAt: Date
    }
    /// A request to approve on the phone what started elsewhere (OpenID CIBA, or a web page's QR code).
    public struct Approval: Sendable {
        /// The request id.
        public let id: String
        /// `sign_in` or `operation`.
        public let kind: String
        /// Who asked, as the phone showed it.
        public let requester: String
        /// The operation's message, as the phone showed it.
        public let bindingMessage: String?
        /// Where a sign-in came from: browser, platform, address (each empty when not known).
        public let channel: CanonicalApproval.Channel
        /// The service client that asked (nil for a web page's QR code).
        public let clientID: String?
        /// `pending`, `approved`, `denied` or `expired` (a pending one past its expiry shows as expired).
        public let status: String
        /// Why it was denied: `denied` by the customer, or `number_mismatch`.
        public let denyReason: String?
        /// The device that answered.
        public let deviceID: String?
        /// When it was asked for.
        public let createdAt: Date
        /// When it was answered.
        public let answeredAt: Date?
    }
    /// An audit event of the account.
    public struct Event: Sendable {
        /// When it happened.
        public let occurredAt: Date
        /// What happened (docs/PROTOCOL.md lists the kinds).
        public let kind: String
        /// Whether it succeeded.
        public let succeeded: Bool
        /// The problem code of a failure.
        public let code: String?
        /// The operator who did it, for a support action.
        public let operatorID: String?
        /// The operator's reason, for a support action.
        public let reason: String?
        /// The device it concerns, if one.
        public var deviceID: String? = nil
        /// The passkey it concerns, if one.
        public var passkeyID: String? = nil
        /// The payment it concerns, if one.
        public var paymentID: String? = nil
        /// The address the request came from (as rate limits count it: IPv6 by its /64), when known.
        public var clientAddress: String? = nil
        /// The request's `User-Agent`, when it sent one.
        public var userAgent: String? = nil
    }

    /// The account id.
    public let accountID: String
    /// The username.
    public let username: String
    /// When the account was made.
    public let createdAt: Date
    /// Until when password sign-in is locked, if it is.
    public let lockedUntil: Date?
    /// Until when PIN payments are locked, if they are.
    public let pinLockedUntil: Date?
    /// Every device, newest first, revoked ones included.
    public let devices: [Device]
    /// Every passkey, newest first, revoked ones included.
    public let passkeys: [Passkey]
    /// The live sessions, newest first.
    public let sessions: [Session]
    /// The 20 most recent.
    public let payments: [Payment]
    /// The 50 most recent, newest first.
    public let events: [Event]
    /// The 20 most recent approval requests, newest first.
    public var approvals: [Approval] = []
}

extension CustomerRecord.Payment {
    /// The payment as support sees it (its amount is nil only for a currency no longer known).
    init(_ payment: PaymentInfo) {
        self.init(
            id: payment.id,
            amount: Currency(code: payment.currency).map { Money(minorUnits: payment.amountMinor, currency: $0) },
            payeeID: payment.payeeID,
            payeeName: payment.payeeName,
            status: payment.status.rawValue,
            createdAt: payment.createdAt
        )
    }
}
