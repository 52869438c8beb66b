import BioAuthCore
import Foundation
import Testing

@Suite("CBOR")
struct CBORTests {
    let decoder = CBORDecoder()

    @Test("round trip of every supported type, shortest lengths")
    func roundTrip() throws {
        let item = CBOR.map([
            .init(.text("fmt"), .text("apple-appattest")),
            .init(.unsigned(1), .negative(6)),
            .init(.text("bytes"), .bytes(Data(repeating: 7, count: 300))),
            .init(.text("list"), .array([.bool(true), .bool(false), .null, .unsigned(23), .unsigned(24), .unsigned(0x1_0000_0000)])),
        ])
        let encoded = CBOREncoder.encode(item)
        #expect(try decoder.decode(encoded) == item)
        #expect(CBOREncoder.encode(.unsigned(23)) == Data([0x17]))
        #expect(CBOREncoder.encode(.unsigned(24)) == Data([0x18, 0x18]))
        #expect(CBOREncoder.encode(.negative(0)) == Data([0x20]))  // -1
        #expect(item["fmt"]?.textValue == "apple-appattest")
        #expect(try decoder.decodePrefix(encoded + Data([0xFF])).1 == encoded.count)
    }

    @Test(
        "malformed input of many shapes is refused with a code",
        arguments: [
            ([UInt8](), "cbor_truncated"),
            ([0x18], "cbor_truncated"),  // missing argument byte
            ([0x18, 0x05], "cbor_non_minimal_length"),  // 5 must be encoded in the head
            ([0x59, 0x00, 0x10], "cbor_non_minimal_length"),
            ([0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], "cbor_truncated"),  // a 4 GiB byte string in 6 bytes
            ([0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "cbor_truncated"),  // 2^64 items
            ([0x5F, 0x41, 0x00, 0xFF], "cbor_unsupported"),  // indefinite length
            ([0xC2, 0x41, 0x01], "cbor_unsupported"),  // a tag
            ([0xF9, 0x3C, 0x00], "cbor_unsupported"),  // a half float
            ([0xF7], "cbor_unsupported"),  // undefined
            ([0xFF], "cbor_unsupported"),  // a lone break
            ([0x1C], "cbor_unsupported"),  // reserved
            ([0x62, 0xC3, 0x28], "cbor_invalid_utf8"),
            ([0xA2, 0x01, 0x02, 0x01, 0x03], "cbor_duplicate_key"),
            ([0xA1, 0x01], "cbor_truncated"),  // a key without a value
            ([0x01, 0x02], "cbor_trailing_bytes"),
        ]
    )
    func malformed(bytes: [UInt8], code: String) {
        #expect(throws: CBORError.self) { try decoder.decode(Data(bytes)) }
        do {
            _ = try decoder.decode(Data(bytes))
        } catch {
            #expect(error.code == code)
        }
    }

    @Test("limits: depth, item count and size are bounded")
    func limits() {
        let deep = Data(repeating: 0x81, count: 10_000) + Data([0x00])  // ten thousand nested arrays
        #expect(code { try decoder.decode(deep) } == "cbor_too_deep")
        let many = Data([0x9A, 0x00, 0x01, 0x86, 0xA0]) + Data(repeating: 0x00, count: 100_000)  // 100 000 items
        #expect(code { try CBORDecoder(maxInputSize: 1 << 20).decode(many) } == "cbor_too_large")
        #expect(code { try decoder.decode(Data(count: 64 * 1024 + 1)) } == "cbor_too_large")
    }

    func code(_ body: () throws -> CBOR) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? CBORError)?.code ?? "not a CBORError"
        }
    }

    @Test("random bytes never crash the decoder")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<64, using: &generator)
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            _ = try? decoder.decode(bytes)
        }
    }
}
