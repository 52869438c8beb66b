import BioAuthCore
import Crypto
import Foundation
import Testing

@Suite("Canonical transaction and receipt v1")
struct PaymentFormatTests {
    struct VectorFile: Decodable {
        struct Transaction: Decodable {
            let paymentId, currency, payeeId, payeeName, bytesHex, sha256Hex: String
            let amountMinor: Int64
            let exponent: Int
        }
        struct Receipt: Decodable {
            let serverPrivateKeyScalarHex, serverPublicKeyX963Hex, signedBytesHex: String
            let json: PaymentReceipt
        }
        let transactions: [Transaction]
        let receipt: Receipt
    }

    static func vectors() throws -> VectorFile {
        let url = try #require(Bundle.module.url(forResource: "payment-v1", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    }

    @Test("transactions encode byte for byte like the independent implementation")
    func transactions() throws {
        let vectors = try Self.vectors().transactions
        #expect(vectors.count == 3)
        for vector in vectors {
            let currency = try #require(Currency(code: vector.currency))
            #expect(currency.minorUnitExponent == vector.exponent)
            let transaction = try CanonicalTransaction(
                paymentID: vector.paymentId,
                amount: Money(minorUnits: vector.amountMinor, currency: currency),
                payeeID: vector.payeeId,
                payeeName: vector.payeeName
            )
            #expect(transaction.bytes == (try hex(vector.bytesHex)), "\(vector.paymentId)")
            #expect(transaction.hash == (try hex(vector.sha256Hex)))
        }
    }

    @Test("every field of a transaction changes its hash")
    func transactionFields() throws {
        let base = try CanonicalTransaction(paymentID: "p1", amount: Money(minorUnits: 8800, currency: .cny), payeeID: "m1", payeeName: "Coffee Shop")
        let variants = [
            try CanonicalTransaction(paymentID: "p2", amount: Money(minorUnits: 8800, currency: .cny), payeeID: "m1", payeeName: "Coffee Shop"),
            try CanonicalTransaction(paymentID: "p1", amount: Money(minorUnits: 8801, currency: .cny), payeeID: "m1", payeeName: "Coffee Shop"),
            try CanonicalTransaction(paymentID: "p1", amount: Money(minorUnits: 8800, currency: .hkd), payeeID: "m1", payeeName: "Coffee Shop"),
            try CanonicalTransaction(paymentID: "p1", amount: Money(minorUnits: 8800, currency: .cny), payeeID: "m2", payeeName: "Coffee Shop"),
            try CanonicalTransaction(paymentID: "p1", amount: Money(minorUnits: 8800, currency: .cny), payeeID: "m1", payeeName: "Coffee Shop."),
        ]
        for variant in variants { #expect(variant.hash != base.hash) }
        #expect(throws: TransactionFormatError.self) {
            try CanonicalTransaction(paymentID: "p1", amount: Money(minorUnits: 0, currency: .cny), payeeID: "m1", payeeName: "x")
        }
        #expect(throws: TransactionFormatError.self) {
            try CanonicalTransaction(paymentID: "", amount: Money(minorUnits: 1, currency: .cny), payeeID: "m1", payeeName: "x")
        }
    }

    @Test("the published receipt verifies with the published key, and any changed field breaks it")
    func receipt() throws {
        let vector = try Self.vectors().receipt
        let serverKey = try DevicePublicKey(x963Representation: try hex(vector.serverPublicKeyX963Hex))
        let receipt = vector.json
        #expect(receipt.signedBytes() == (try hex(vector.signedBytesHex)))
        #expect(receipt.isValid(signedBy: serverKey))
        #expect(!receipt.isValid(signedBy: DevicePublicKey(P256.Signing.PrivateKey().publicKey)))

        var tampered: [PaymentReceipt] = []
        for change in 0..<9 {
            var copy = receipt
            switch change {
            case 0: copy.amountMinor += 1
            case 1: copy.currency = "HKD"
            case 2: copy.payeeId = "merchant-evil"
            case 3: copy.payeeName = "Coffee Shop "
            case 4: copy.paymentId = "3f1c2a9e-0b7d-4c55-9a61-2e8f0d4b7c11"
            case 5: copy.accountId = "someone-else"
            case 6: copy.method = "pin"
            case 7: copy.authorizedAtMs += 1
            default: copy.signature = String(copy.signature.dropLast(2)) + "AA"
            }
            tampered.append(copy)
        }
        for copy in tampered { #expect(!copy.isValid(signedBy: serverKey)) }
        // The vector has no currencyExponent (receipts did not carry it at first): it reads as the currency's own.
        #expect(receipt.currencyExponent == 2)
        var malformed = receipt
        malformed.currency = "XXX"
        #expect(malformed.signedBytes() == nil && !malformed.isValid(signedBy: serverKey))
    }

    @Test("a receipt carries its currency's exponent; one that states another exponent, or swaps the currency for one with another, is not valid")
    func receiptExponent() throws {
        let vector = try Self.vectors().receipt
        let serverKey = try DevicePublicKey(x963Representation: try hex(vector.serverPublicKeyX963Hex))
        let receipt = vector.json
        let encoded = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(receipt)) as? [String: Any])
        #expect(encoded["currencyExponent"] as? Int == 2, "written out, so a verifier in another language needs no ISO table")
        let decoded = try JSONDecoder().decode(PaymentReceipt.self, from: JSONSerialization.data(withJSONObject: encoded))
        #expect(decoded == receipt && decoded.isValid(signedBy: serverKey))

        for exponent in [0, 3, -1] {
            var stated = encoded
            stated["currencyExponent"] = exponent
            let lying = try JSONDecoder().decode(PaymentReceipt.self, from: JSONSerialization.data(withJSONObject: stated))
            #expect(lying.transaction == nil && lying.signedBytes() == nil && !lying.isValid(signedBy: serverKey), "exponent \(exponent)")
        }
        // JPY has exponent 0: a receipt that keeps CNY's 2 but names JPY is refused before any signature check.
        var swapped = receipt
        swapped.currency = "JPY"
        #expect(swapped.transaction == nil && !swapped.isValid(signedBy: serverKey))
        // Built from a Money, the exponent is the currency's.
        let built = PaymentReceipt(
            paymentId: "p",
            accountId: "a",
            amount: Money(minorUnits: 5, currency: try #require(Currency(code: "KWD"))),
            payeeId: "m",
            payeeName: "Shop",
            method: "pin",
            authorizedAtMs: 0,
            keyId: receipt.keyId
        )
        #expect(built.currencyExponent == 3 && built.transaction != nil)
    }
}
