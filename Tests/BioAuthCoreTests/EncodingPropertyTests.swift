import BioAuthCore
import Foundation
import PropertyBased
import Testing

/// Properties of every encoding BioAuth signs, hashes or puts on the wire, checked on generated values (swift-property-based;
/// a failure prints the seed that reproduces it and the smallest input it could shrink to).
///
/// The canonical formats are read back by ``CanonicalReader``, written here from the layout docs/PROTOCOL.md publishes
/// rather than from the encoder: if the bytes read back to the fields, the encoding is unambiguous (two different values
/// can't share bytes) and it is the documented one.
@Suite("Encodings: generated values")
struct EncodingPropertyTests {
    // MARK: signed payload

    @Test("a signed payload reads back to its fields by the documented layout, with nothing left over")
    func signedPayloadReadsBack() async throws {
        await propertyCheck(input: Generators.signedPayload) { payload in
            var reader = CanonicalReader(payload.bytes)
            #expect(reader.header() == 1)
            #expect(reader.field() == Array(payload.purpose.rawValue.utf8))
            #expect(reader.field() == Array(payload.relyingPartyID.utf8))
            #expect(reader.field() == Array(payload.challenge))
            #expect(reader.field() == Array(payload.keyID))
            #expect(reader.uint64() == payload.counter)
            #expect(reader.field() == Array(payload.transactionHash))
            #expect(reader.isAtEnd)
        }
    }

    @Test("changing any one field of a signed payload changes its bytes")
    func signedPayloadFieldsAllCount() async throws {
        await propertyCheck(input: Generators.signedPayload, Gen.int(in: 0...4), Generators.bytes(count: 32)) { payload, field, fresh in
            let changed: SignedPayload
            switch field {
            case 0:
                changed = try SignedPayload(
                    purpose: payload.purpose,
                    relyingPartyID: payload.relyingPartyID == "x" ? "y" : "x",
                    challenge: payload.challenge,
                    keyID: payload.keyID,
                    counter: payload.counter,
                    transactionHash: payload.transactionHash
                )
            case 1:
                changed = try SignedPayload(
                    purpose: payload.purpose,
                    relyingPartyID: payload.relyingPartyID,
                    challenge: fresh,
                    keyID: payload.keyID,
                    counter: payload.counter,
                    transactionHash: payload.transactionHash
                )
            case 2:
                changed = try SignedPayload(
                    purpose: payload.purpose,
                    relyingPartyID: payload.relyingPartyID,
                    challenge: payload.challenge,
                    keyID: fresh,
                    counter: payload.counter,
                    transactionHash: payload.transactionHash
                )
            case 3:
                changed = try SignedPayload(
                    purpose: payload.purpose,
                    relyingPartyID: payload.relyingPartyID,
                    challenge: payload.challenge,
                    keyID: payload.keyID,
                    counter: payload.counter ^ 1,
                    transactionHash: payload.transactionHash
                )
            default:
                // A payment hash, or a purpose with no hash: `register` for `login` and back.
                changed =
                    payload.purpose == .payment
                    ? try SignedPayload(
                        purpose: .payment,
                        relyingPartyID: payload.relyingPartyID,
                        challenge: payload.challenge,
                        keyID: payload.keyID,
                        counter: payload.counter,
                        transactionHash: fresh
                    )
                    : try SignedPayload(
                        purpose: payload.purpose == .login ? .register : .login,
                        relyingPartyID: payload.relyingPartyID,
                        challenge: payload.challenge,
                        keyID: payload.keyID,
                        counter: payload.counter
                    )
            }
            #expect((changed == payload) == (changed.bytes == payload.bytes))
        }
    }

    @Test("a signed payload with a field out of range is refused, never encoded")
    func signedPayloadRanges() async throws {
        await propertyCheck(input: Gen.int(in: 0...64), Gen.int(in: 0...64), Gen.uint64(in: 0...UInt64.max)) { challengeSize, keySize, counter in
            let valid = challengeSize == 32 && keySize == 32 && counter <= SignedPayload.maxCounter
            let made = try? SignedPayload(
                purpose: .login,
                relyingPartyID: "bank.example",
                challenge: Data(count: challengeSize),
                keyID: Data(count: keySize),
                counter: counter
            )
            #expect((made != nil) == valid)
        }
    }

    // MARK: canonical transaction

    @Test("a transaction reads back to its fields by the documented layout; names are signed exactly as given, not normalized")
    func transactionReadsBack() async throws {
        await propertyCheck(input: Generators.transaction) { transaction in
            var reader = CanonicalReader(transaction.bytes)
            #expect(reader.header() == 1)
            #expect(reader.field() == Array("transaction".utf8))
            #expect(reader.field() == Array(transaction.paymentID.utf8))
            #expect(reader.uint64() == UInt64(transaction.amount.minorUnits))
            #expect(reader.field() == Array(transaction.amount.currency.code.utf8))
            #expect(reader.uint8() == UInt8(transaction.amount.currency.minorUnitExponent))
            #expect(reader.field() == Array(transaction.payeeID.utf8))
            #expect(reader.field() == Array(transaction.payeeName.utf8))
            #expect(reader.isAtEnd)
        }
    }

    @Test("two transactions whose payee names differ only in Unicode normalization hash differently")
    func transactionNormalizationCounts() throws {
        let composed = try CanonicalTransaction(
            paymentID: "p-1",
            amount: Money(minorUnits: 100, currency: .eur),
            payeeID: "cafe",
            payeeName: "Caf\u{E9}"
        )
        let decomposed = try CanonicalTransaction(
            paymentID: "p-1",
            amount: Money(minorUnits: 100, currency: .eur),
            payeeID: "cafe",
            payeeName: "Cafe\u{301}"
        )
        // Swift's String equality is canonical equivalence, so the values compare equal; what is signed does not.
        #expect(composed.payeeName == decomposed.payeeName)
        #expect(composed.hash != decomposed.hash)
    }

    // MARK: CBOR

    @Test("CBOR: decoding an encoding gives the item back, and encoding it again gives the same bytes")
    func cborRoundTrip() async throws {
        await propertyCheck(count: 300, input: Generators.cbor) { item in
            let bytes = CBOREncoder.encode(item)
            let decoded = try CBORDecoder().decode(bytes)
            #expect(decoded == item)
            #expect(CBOREncoder.encode(decoded) == bytes)
        }
    }

    @Test("CBOR: every proper prefix of an encoding is refused as truncated; a trailing byte is refused as trailing")
    func cborTruncation() async throws {
        await propertyCheck(count: 200, input: Generators.cbor, Gen.double(in: 0..<1)) { item, fraction in
            let bytes = CBOREncoder.encode(item)
            let cut = Int(Double(bytes.count) * fraction)
            #expect(Self.refusal(of: bytes.prefix(cut)) == "cbor_truncated")
            #expect(Self.refusal(of: bytes + [0xF6]) == "cbor_trailing_bytes")
            let (prefixItem, used) = try CBORDecoder().decodePrefix(bytes + [0xF6])
            #expect(prefixItem == item && used == bytes.count)
        }
    }

    /// The code `data` is refused with, or `nil` when it decodes.
    static func refusal(of data: Data) -> String? {
        do {
            _ = try CBORDecoder().decode(data)
            return nil
        } catch {
            return error.code
        }
    }

    // MARK: base64url

    @Test("base64url: decode(encode(bytes)) is the bytes; the text is unpadded and uses only the URL-safe alphabet")
    func base64URLRoundTrip() async throws {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        await propertyCheck(count: 300, input: Generators.bytes(in: 0...100)) { data in
            let text = Base64URL.encode(data)
            #expect(Base64URL.decode(text) == data)
            #expect(text.utf8.count == (data.count * 4 + 2) / 3)
            #expect(text.utf8.allSatisfy(alphabet.contains))
        }
    }

    @Test("base64url: any text that decodes is the one spelling of its bytes")
    func base64URLOneSpelling() async throws {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ ")
        let text = Gen.int(in: 0...(characters.count - 1)).map { characters[$0] }.array(of: 0...24).map { String($0) }
        await propertyCheck(count: 500, input: text) { text in
            if let decoded = Base64URL.decode(text) {
                #expect(Base64URL.encode(decoded) == text)
            }
        }
    }

    // MARK: dates and amounts

    @Test("RFC 3339: whole seconds in years 1 to 9999 read back exactly, and the text sorts as the dates do")
    func dateRoundTrip() async throws {
        // 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
        let seconds = Gen.int64(in: -62_135_596_800...253_402_300_799)
        await propertyCheck(count: 300, input: seconds, seconds) { first, second in
            let format = InternetDateTime()
            let (a, b) = (Date(timeIntervalSince1970: Double(first)), Date(timeIntervalSince1970: Double(second)))
            let (textA, textB) = (try format.encode(a), try format.encode(b))
            #expect(try format.decode(textA) == a)
            #expect((textA < textB) == (a < b))
        }
    }

    @Test("an amount's decimal text has the currency's number of decimals and the exact integer's digits")
    func decimalString() async throws {
        let currencies = Currency.all
        await propertyCheck(count: 300, input: Gen.int64(), Gen.int(in: 0...(currencies.count - 1))) { minor, index in
            let money = Money(minorUnits: minor, currency: currencies[index])
            let text = money.decimalString
            let exponent = money.currency.minorUnitExponent
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == (exponent == 0 ? 1 : 2))
            if exponent > 0 { #expect(parts[1].count == exponent) }
            // Without the point, the digits are the integer's (leading zeros of a small amount aside).
            let digits = text.replacingOccurrences(of: ".", with: "").drop { $0 == "-" }.drop { $0 == "0" }
            #expect(String(digits) == (minor == 0 ? "" : String(minor.magnitude)))
            #expect(text.hasPrefix("-") == (minor < 0))
        }
    }
}

/// Generators of valid values for the properties above.
enum Generators {
    /// Exactly `count` random bytes.
    static func bytes(count: Int) -> Generator<Data, some SendableSequenceType> {
        Gen.uint8().array(of: count).map { Data($0) }
    }

    /// `range` random bytes.
    static func bytes(in range: ClosedRange<Int>) -> Generator<Data, some SendableSequenceType> {
        Gen.uint8().array(of: range).map { Data($0) }
    }

    /// Any Unicode scalar value (surrogate code points excluded), weighted towards none.
    static var scalar: Generator<Character, some SendableSequenceType> {
        Gen.uint32(in: 0...(0x10FFFF - 0x800)).map { value -> Character in
            Character(Unicode.Scalar(value < 0xD800 ? value : value + 0x800)!)
        }
    }

    /// Text of 1 to 255 UTF-8 bytes from any scalars: ASCII, combining marks, emoji, control characters.
    static var fieldText: Generator<String, some SendableSequenceType> {
        Gen<String>.oneOf(Gen.letterOrNumber.string(of: 1...40), scalar.string(of: 1...40)).map { text -> String in
            var text = text
            while text.utf8.count > 255 { text.removeLast() }
            return text.isEmpty ? "x" : text
        }
    }

    static var signedPayload: Generator<SignedPayload, some SendableSequenceType> {
        zip(
            Gen.int(in: 0...4),
            fieldText,
            bytes(count: 32),
            bytes(count: 32),
            Gen.uint64(in: 0...SignedPayload.maxCounter)
        ).map { purposeIndex, relyingPartyID, challenge, keyID, counter -> SignedPayload in
            let purposes: [SignedPayload.Purpose] = [.register, .login, .payment, .paymentPIN, .init(rawValue: "future")]
            let purpose = purposes[purposeIndex]
            // The hash is derived from the challenge so that one generator draws it.
            let hash = purpose == .payment ? Data(challenge.reversed()) : Data()
            return try! SignedPayload(
                purpose: purpose,
                relyingPartyID: relyingPartyID,
                challenge: challenge,
                keyID: keyID,
                counter: counter,
                transactionHash: hash
            )
        }
    }

    static var transaction: Generator<CanonicalTransaction, some SendableSequenceType> {
        zip(
            fieldText,
            Gen.int64(in: 1...Int64.max),
            Gen.int(in: 0...(Currency.all.count - 1)),
            fieldText,
            fieldText
        ).map { paymentID, minor, currencyIndex, payeeID, payeeName -> CanonicalTransaction in
            try! CanonicalTransaction(
                paymentID: paymentID,
                amount: Money(minorUnits: minor, currency: Currency.all[currencyIndex]),
                payeeID: payeeID,
                payeeName: payeeName
            )
        }
    }

    /// CBOR items up to depth 4, built from a list of random numbers (so the library can shrink the list).
    static var cbor: Generator<CBOR, some SendableSequenceType> {
        Gen.uint64().array(of: 1...60).map { numbers -> CBOR in
            var source = numbers.makeIterator()
            return CBORBuilder.item(from: &source, depth: 0)
        }
    }
}

/// Builds a CBOR item from random numbers: each number picks a kind and its value. Map keys are kept distinct.
enum CBORBuilder {
    static func item(from source: inout IndexingIterator<[UInt64]>, depth: Int) -> CBOR {
        guard let number = source.next() else { return .null }
        let value = number >> 8
        // Integers near each length boundary (23/24, 255/256, …) as well as anywhere.
        let boundaries: [UInt64] = [0, 23, 24, 255, 256, 65535, 65536, 0xFFFF_FFFF, 0x1_0000_0000, .max]
        let integer = number & 0x10 != 0 ? boundaries[Int(value % UInt64(boundaries.count))] : value
        switch (number & 0xFF) % (depth < 4 ? 9 : 7) {
        case 0: return .unsigned(integer)
        case 1: return .negative(integer)
        case 2: return .bytes(Data((0..<Int(value % 40)).map { UInt8(truncatingIfNeeded: value &* UInt64($0 + 1) >> 3) }))
        case 3:
            let scalars = (0..<Int(value % 12)).map { index -> Character in
                let raw = UInt32(truncatingIfNeeded: (value &+ UInt64(index) &* 7919) % 0x10F800)
                return Character(Unicode.Scalar(raw < 0xD800 ? raw : raw + 0x800)!)
            }
            return .text(String(scalars))
        case 4: return .bool(value & 1 == 1)
        case 5: return .null
        case 6: return .text(["fmt", "attStmt", "authData", "x5c", "receipt"][Int(value % 5)])
        case 7:
            return .array((0..<Int(value % 5)).map { _ in item(from: &source, depth: depth + 1) })
        default:
            var pairs: [CBOR.Pair] = []
            var keys = Set<CBOR>()
            for _ in 0..<Int(value % 5) {
                let key = item(from: &source, depth: depth + 1)
                let pairValue = item(from: &source, depth: depth + 1)
                if keys.insert(key).inserted { pairs.append(CBOR.Pair(key, pairValue)) }
            }
            return .map(pairs)
        }
    }
}

/// Reads BioAuth's canonical encodings by the layout docs/PROTOCOL.md gives: `"BIOAUTH" 0x00`, a version byte, then
/// `u16 big-endian length ‖ bytes` fields and fixed-size big-endian integers. Every read returns `nil` past the end.
struct CanonicalReader {
    private let bytes: [UInt8]
    private var index = 0

    init(_ data: Data) { bytes = Array(data) }

    /// The version byte after the domain, or `nil` if the domain is not there.
    mutating func header() -> UInt8? {
        guard bytes.starts(with: Array("BIOAUTH\u{0}".utf8)), bytes.count > 8 else { return nil }
        index = 9
        return bytes[8]
    }

    mutating func field() -> [UInt8]? {
        guard let high = uint8(), let low = uint8() else { return nil }
        let length = Int(high) << 8 | Int(low)
        guard index + length <= bytes.count else { return nil }
        defer { index += length }
        return Array(bytes[index..<index + length])
    }

    mutating func uint64() -> UInt64? {
        guard index + 8 <= bytes.count else { return nil }
        defer { index += 8 }
        return bytes[index..<index + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func uint8() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    var isAtEnd: Bool { index == bytes.count }
}
