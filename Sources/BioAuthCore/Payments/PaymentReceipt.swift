import Crypto
import Foundation

/// Proof, signed by the server's receipt key, that a payment was authorized. A client verifies it offline
/// with the key published at `GET /v1/receipt-keys`.
///
/// The signature (ECDSA P-256 / SHA-256, DER, base64url) covers ``signedBytes()``:
///
/// ```
/// "BIOAUTH" 0x00, version 0x01
/// "receipt"            u16 length ‖ ASCII
/// receipt key id       u16 length ‖ 32 bytes (SHA-256 of the server key's X9.63 form)
/// transaction hash     u16 length ‖ 32 bytes (SHA-256 of the CanonicalTransaction of the fields below)
/// account id           u16 length ‖ UTF-8
/// method               u16 length ‖ ASCII ("biometric" or "pin")
/// authorized at        u64 big-endian, milliseconds since 1970
/// ```
///
/// Changing any field — amount, currency, payee, payment id, account, method, time — breaks the signature.
public struct PaymentReceipt: Codable, Hashable, Sendable {
    /// Format version (1).
    public var version: Int
    /// The payment.
    public var paymentId: String
    /// The account that authorized it.
    public var accountId: String
    /// Amount in minor units.
    public var amountMinor: Int64
    /// ISO 4217 code.
    public var currency: String
    /// The payee's id.
    public var payeeId: String
    /// The payee's display name.
    public var payeeName: String
    /// `"biometric"` or `"pin"`.
    public var method: String
    /// When it was authorized, in milliseconds since 1970.
    public var authorizedAtMs: Int64
    /// The server receipt key's id, base64url.
    public var keyId: String
    /// The signature, base64url.
    public var signature: String

    /// A receipt with these fields (the server fills in ``signature`` after signing ``signedBytes()``).
    public init(
        paymentId: String, accountId: String, amount: Money, payeeId: String, payeeName: String, method: String,
        authorizedAtMs: Int64, keyId: String, signature: String = ""
    ) {
        self.version = 1
        self.paymentId = paymentId
        self.accountId = accountId
        self.amountMinor = amount.minorUnits
        self.currency = amount.currency.code
        self.payeeId = payeeId
        self.payeeName = payeeName
        self.method = method
        self.authorizedAtMs = authorizedAtMs
        self.keyId = keyId
        self.signature = signature
    }

    /// A receipt exactly as it arrived on the wire; ``isValid(signedBy:)`` decides whether it is any good.
    public init(
        version: Int, paymentId: String, accountId: String, amountMinor: Int64, currency: String, payeeId: String, payeeName: String,
        method: String, authorizedAtMs: Int64, keyId: String, signature: String
    ) {
        self.version = version
        self.paymentId = paymentId
        self.accountId = accountId
        self.amountMinor = amountMinor
        self.currency = currency
        self.payeeId = payeeId
        self.payeeName = payeeName
        self.method = method
        self.authorizedAtMs = authorizedAtMs
        self.keyId = keyId
        self.signature = signature
    }

    /// The transaction the receipt is for, or `nil` when its fields are not a valid transaction.
    public var transaction: CanonicalTransaction? {
        guard let currency = Currency(code: currency) else { return nil }
        return try? CanonicalTransaction(
            paymentID: paymentId, amount: Money(minorUnits: amountMinor, currency: currency), payeeID: payeeId,
            payeeName: payeeName)
    }

    /// The bytes the signature covers, or `nil` when a field is malformed.
    public func signedBytes() -> Data? {
        guard version == 1, let transaction, let keyID = Base64URL.decode(keyId), keyID.count == 32, authorizedAtMs >= 0,
            (1...255).contains(accountId.utf8.count), method == "biometric" || method == "pin"
        else { return nil }
        var writer = CanonicalWriter(version: 1)
        writer.field("receipt")
        writer.field(keyID)
        writer.field(transaction.hash)
        writer.field(accountId)
        writer.field(method)
        writer.uint64(UInt64(authorizedAtMs))
        return writer.bytes
    }

    /// Whether this receipt was signed by `serverKey` and is intact. Never throws: anything malformed is
    /// simply not valid.
    public func isValid(signedBy serverKey: DevicePublicKey) -> Bool {
        guard Base64URL.decode(keyId) == serverKey.keyID, let bytes = signedBytes(), let signature = Base64URL.decode(signature)
        else { return false }
        return serverKey.isValidSignature(signature, for: bytes)
    }
}
