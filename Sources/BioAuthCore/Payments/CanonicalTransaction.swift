import Crypto
import Foundation

/// The canonical bytes of a payment, whose SHA-256 a `payment` signature carries (PSD2 dynamic linking):
/// the device signs the amount and payee it showed, and the server recomputes them from its own record.
///
/// ```
/// "BIOAUTH" 0x00, version 0x01
/// "transaction"        u16 length ‖ ASCII
/// payment id           u16 length ‖ UTF-8
/// amount               u64 big-endian, minor units
/// currency             u16 length ‖ ASCII (ISO 4217, e.g. "CNY")
/// minor-unit exponent  1 byte (2 for CNY, 0 for JPY)
/// payee id             u16 length ‖ UTF-8
/// payee name           u16 length ‖ UTF-8, exactly as shown
/// ```
public struct CanonicalTransaction: Hashable, Sendable {
    /// The payment's id on the server.
    public let paymentID: String
    /// The amount, positive, in minor units.
    public let amount: Money
    /// The payee's stable id.
    public let payeeID: String
    /// The payee's display name, as the prompt shows it.
    public let payeeName: String

    /// A transaction with these fields.
    ///
    /// - Throws: ``TransactionFormatError`` when the amount is not positive or a text field is empty or over
    ///   255 bytes.
    public init(paymentID: String, amount: Money, payeeID: String, payeeName: String) throws(TransactionFormatError) {
        guard amount.minorUnits > 0 else { throw TransactionFormatError("the amount must be positive") }
        for (name, value) in [("payment id", paymentID), ("payee id", payeeID), ("payee name", payeeName)] {
            guard (1...255).contains(value.utf8.count) else { throw TransactionFormatError("the \(name) must be 1 to 255 bytes") }
        }
        self.paymentID = paymentID
        self.amount = amount
        self.payeeID = payeeID
        self.payeeName = payeeName
    }

    /// The canonical bytes.
    public var bytes: Data {
        var writer = CanonicalWriter(version: 1)
        writer.field("transaction")
        writer.field(paymentID)
        writer.uint64(UInt64(amount.minorUnits))
        writer.field(amount.currency.code)
        writer.uint8(UInt8(amount.currency.minorUnitExponent))
        writer.field(payeeID)
        writer.field(payeeName)
        return writer.bytes
    }

    /// SHA-256 of ``bytes``: the `transactionHash` of a payment's ``SignedPayload``.
    public var hash: Data { Data(SHA256.hash(data: bytes)) }
}

/// A transaction field is out of range.
public struct TransactionFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
