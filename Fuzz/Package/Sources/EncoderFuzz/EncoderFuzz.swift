import BioAuthCore
import Foundation
import FuzzDriver

// libFuzzer entry: the signed-payload and canonical-transaction encoders, on any field values. The input is read as
// fields (a one-byte length, then that many bytes; a missing field is empty). Whatever the fields, the initializer
// refuses them or the bytes it signs read back to exactly those fields by the layout docs/PROTOCOL.md gives, so
// no two accepted values share their signed bytes.

/// Reads fuzzer input as one-byte-length-prefixed fields.
private struct Fields {
    var bytes: ArraySlice<UInt8>
    mutating func next() -> [UInt8] {
        guard let length = bytes.popFirst() else { return [] }
        let field = bytes.prefix(Int(length))
        bytes = bytes.dropFirst(field.count)
        return Array(field)
    }
    mutating func uint64() -> UInt64 { next().prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }
}

/// Reads the canonical layout back: the domain and version, then u16-length fields and big-endian integers.
private struct Canonical {
    var bytes: ArraySlice<UInt8>
    init(_ data: Data) {
        precondition(data.starts(with: Array("BIOAUTH\u{0}".utf8) + [1]), "the domain and version are missing")
        bytes = ArraySlice(data).dropFirst(9)
    }
    mutating func field() -> [UInt8] {
        precondition(bytes.count >= 2, "a field's length is missing")
        let length = Int(bytes.removeFirst()) << 8 | Int(bytes.removeFirst())
        precondition(bytes.count >= length, "a field runs past the end")
        defer { bytes = bytes.dropFirst(length) }
        return Array(bytes.prefix(length))
    }
    mutating func integer(_ size: Int) -> UInt64 {
        precondition(bytes.count >= size, "an integer runs past the end")
        defer { bytes = bytes.dropFirst(size) }
        return bytes.prefix(size).reduce(0) { $0 << 8 | UInt64($1) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEncoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var fields = Fields(bytes: ArraySlice(UnsafeBufferPointer(start: data, count: size)))
    let purpose = SignedPayload.Purpose(rawValue: String(decoding: fields.next(), as: UTF8.self))
    let relyingPartyID = String(decoding: fields.next(), as: UTF8.self)
    let (challenge, keyID, counter, hash) = (Data(fields.next()), Data(fields.next()), fields.uint64(), Data(fields.next()))
    if let payload = try? SignedPayload(
        purpose: purpose,
        relyingPartyID: relyingPartyID,
        challenge: challenge,
        keyID: keyID,
        counter: counter,
        transactionHash: hash
    ) {
        var reader = Canonical(payload.bytes)
        precondition(reader.field() == Array(purpose.rawValue.utf8), "purpose")
        precondition(reader.field() == Array(relyingPartyID.utf8), "relying-party id")
        precondition(reader.field() == Array(challenge) && reader.field() == Array(keyID), "challenge or key id")
        precondition(reader.integer(8) == counter && reader.field() == Array(hash), "counter or hash")
        precondition(reader.bytes.isEmpty, "bytes after the last field")
    }

    let paymentID = String(decoding: fields.next(), as: UTF8.self)
    let minor = Int64(bitPattern: fields.uint64())
    let code = String(decoding: fields.next(), as: UTF8.self)
    let (payeeID, payeeName) = (String(decoding: fields.next(), as: UTF8.self), String(decoding: fields.next(), as: UTF8.self))
    if let currency = Currency(code: code),
        let transaction = try? CanonicalTransaction(
            paymentID: paymentID,
            amount: Money(minorUnits: minor, currency: currency),
            payeeID: payeeID,
            payeeName: payeeName
        )
    {
        var reader = Canonical(transaction.bytes)
        precondition(reader.field() == Array("transaction".utf8), "kind")
        precondition(reader.field() == Array(paymentID.utf8), "payment id")
        precondition(reader.integer(8) == UInt64(minor) && minor > 0, "amount")
        precondition(reader.field() == Array(code.utf8) && reader.integer(1) == UInt64(currency.minorUnitExponent), "currency")
        precondition(reader.field() == Array(payeeID.utf8) && reader.field() == Array(payeeName.utf8), "payee")
        precondition(reader.bytes.isEmpty, "bytes after the last field")
    }
    return 0
}

// The executable's entry (see FuzzDriver).
@_cdecl("EncoderFuzz_main")
public func encoderFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzEncoders)
}
