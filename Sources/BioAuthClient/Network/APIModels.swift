import BioAuthCore
import Foundation

/// The tokens of a session. Kept in the ``SecureStore``, never logged.
public struct SessionTokens: Codable, Hashable, Sendable {
    /// The session.
    public var sessionID: String
    /// The account.
    public var accountID: String
    /// Sent as `Authorization: Bearer`.
    public var accessToken: String
    /// When the access token stops working.
    public var accessTokenExpiresAt: Date
    /// Exchanged for a new pair when the access token expired; single use.
    public var refreshToken: String
    /// When the refresh token stops working.
    public var refreshTokenExpiresAt: Date
}

/// A server challenge for a device key to sign.
public struct ServerChallenge: Hashable, Sendable {
    /// The challenge's id, sent back with the signature.
    public var id: String
    /// The 32 challenge bytes that go into the signed payload.
    public var challenge: Data
    /// What a signature over it is for.
    public var purpose: SignedPayload.Purpose
    /// The relying-party id that goes into the signed payload.
    public var relyingPartyID: String
    /// The key that must sign, when the challenge is bound to one.
    public var keyID: Data?
    /// The payment, for payment challenges.
    public var paymentID: String?
    /// When it stops being accepted.
    public var expiresAt: Date
}

/// An account as the server created it.
public struct AccountSummary: Hashable, Sendable {
    /// The account's id.
    public var id: String
    /// The normalized (lowercase) username.
    public var username: String
}

/// A device bound to the account.
public struct RegisteredDevice: Hashable, Sendable {
    /// The device's id on the server.
    public var id: String
    /// SHA-256 of its public key.
    public var keyID: Data
    /// The sensor it was enabled with.
    public var biometryKind: BiometryKind
    /// The name it was registered with.
    public var name: String
    /// The installation it was registered from.
    public var installationID: String
    /// When it was revoked, if it was.
    public var revokedAt: Date?
    /// `"apple-appattest"` when it registered with a valid App Attest attestation, else `"none"`.
    public var attestation: String = "none"
    /// What bound it beyond the password: `"password"` (an account's first device), `"approval"` (approved on a device
    /// bound before) or `"binding_code"` (a code from the bank).
    public var boundBy: String = "password"
    /// Until when it is in its cooling-off (bound by a password alone): it approves no sign-ins elsewhere or new
    /// devices, and pays up to a daily limit. Nil when it has none.
    public var coolingOffUntil: Date? = nil
}

/// What binds a new device's key beyond the password, when the account has a device already
/// (`device_binding_required`).
public enum DeviceBindingEvidence: Hashable, Sendable {
    /// A `bind_device` request a device bound before approved (``BioAuthAPI/requestDeviceBinding(keyID:biometryKind:deviceName:accessToken:)``).
    case approval(id: String)
    /// A binding code the bank gave the customer (a branch, a letter, a call after its identity check), as typed.
    case bindingCode(String)
    /// One of the customer's own recovery codes (``BioAuthFlows/createRecoveryCodes()``), as typed: the new device
    /// replaces every other device, passkey and session of the account.
    case recoveryCode(String)
}

/// A `bind_device` request, as the new device shows it: the number the customer picks on the device that approves.
public struct DeviceBindingRequest: Hashable, Sendable {
    /// The request's id: the approval the registration names once it is approved.
    public var approvalID: String
    /// The number to show on the new device (10-99).
    public var matchNumber: Int
    /// When the request expires unanswered.
    public var expiresAt: Date
}

/// A payment's state on the server.
public struct PaymentDetails: Hashable, Sendable {
    /// `pending`, `authorized`, `cancelled`, `expired` or `locked`.
    public var status: String
    /// The payment's id.
    public var id: String
    /// The exact amount.
    public var amount: Money
    /// The payee's stable id.
    public var payeeID: String
    /// The payee's display name: shown in the prompt and signed.
    public var payeeName: String
    /// Whether the bank verified the payee when the payment was made (`nil` from a server that does not say).
    public var payeeVerified: Bool? = nil
    /// A note; not signed.
    public var memo: String?
    /// The server's hash of the canonical transaction (for display and checks; the device computes its own).
    public var transactionHash: Data
    /// Failed authorizations so far.
    public var failedAttempts: Int
    /// When a pending payment expires.
    public var expiresAt: Date
    /// `biometric` or `pin`, once authorized.
    public var authorizationMethod: String?
    /// The server-signed receipt, once authorized.
    public var receipt: PaymentReceipt?

    /// The canonical transaction built from what this client will show: the amount and payee it received.
    public func transaction() throws -> CanonicalTransaction {
        try CanonicalTransaction(paymentID: id, amount: amount, payeeID: payeeID, payeeName: payeeName)
    }
}
