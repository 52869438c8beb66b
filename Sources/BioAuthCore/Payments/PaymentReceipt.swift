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
    /// The currency's minor-unit exponent (ISO 4217: 2 for CNY, 0 for JPY, 3 for KWD), which the transaction hash
    /// covers. It is here so that a verifier in any language needs no currency table. A receipt that arrives without
    /// it (one signed before receipts carried it) takes it from ``Currency``; a receipt whose value is not its
    /// currency's exponent is not valid. `nil` only for a currency BioAuth does not know.
    public var currencyExponent: Int?
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
        paymentId: String,
        accountId: String,
        amount: Money,
        payeeId: String,
        payeeName: String,
        method: String,
        authorizedAtMs: Int64,
        keyId: String,
        signature: String = ""
    ) {
        self.version = 1
        self.paymentId = paymentId
        self.accountId = accountId
        self.amountMinor = amount.minorUnits
        self.currency = amount.currency.code
        self.currencyExponent = amount.currency.minorUnitExponent
        self.payeeId = payeeId
        self.payeeName = payeeName
        self.method = method
        self.authorizedAtMs = authorizedAtMs
        self.keyId = keyId
        self.signature = signature
    }

    /// A receipt exactly as it arrived on the wire; ``isValid(signedBy:)`` decides whether it is any good. Without
    /// `currencyExponent`, the exponent is the currency's own.
    public init(
        version: Int,
        paymentId: String,
        accountId: String,
        amountMinor: Int64,
        currency: String,
        currencyExponent: Int? = nil,
        payeeId: String,
        payeeName: String,
        method: String,
        authorizedAtMs: Int64,
        keyId: String,
        signature: String
    ) {
        self.version = version
        self.paymentId = paymentId
        self.accountId = accountId
        self.amountMinor = amountMinor
        self.currency = currency
        self.currencyExponent = currencyExponent ?? Currency(code: currency)?.minorUnitExponent
        self.payeeId = payeeId
        self.payeeName = payeeName
        self.method = method
        self.authorizedAtMs = authorizedAtMs
        self.keyId = keyId
        self.signature = signature
    }

    /// Reads a receipt; one without `currencyExponent` takes its currency's.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            version: try container.decode(Int.self, forKey: .version),
            paymentId: try container.decode(String.self, forKey: .paymentId),
            accountId: try container.decode(String.self, forKey: .accountId),
            amountMinor: try container.decode(Int64.self, forKey: .amountMinor),
            currency: try container.decode(String.self, forKey: .currency),
            currencyExponent: try container.decodeIfPresent(Int.self, forKey: .currencyExponent),
            payeeId: try container.decode(String.self, forKey: .payeeId),
            payeeName: try container.decode(String.self, forKey: .payeeName),
            method: try container.decode(String.self, forKey: .method),
            authorizedAtMs: try container.decode(Int64.self, forKey: .authorizedAtMs),
            keyId: try container.decode(String.self, forKey: .keyId),
            signature: try container.decode(String.self, forKey: .signature)
        )
    }

    /// The transaction the receipt is for, or `nil` when its fields are not a valid transaction (an unknown
    /// currency, or an exponent that is not the currency's).
    public var transaction: CanonicalTransaction? {
        guard let currency = Currency(code: currency), (currencyExponent ?? currency.minorUnitExponent) == currency.minorUnitExponent
        else { return nil }
        return try? CanonicalTransaction(
            paymentID: paymentId,
            amount: Money(minorUnits: amountMinor, currency: currency),
            payeeID: payeeId,
            payeeName: payeeName
        )
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
