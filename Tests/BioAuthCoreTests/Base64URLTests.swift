import BioAuthCore
import Foundation
import Testing

@Suite("base64url")
struct Base64URLTests {
    @Test("RFC 4648's test vectors, unpadded")
    func rfcVectors() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Data(plain.utf8))
        }
    }

    @Test("every length and every byte value round-trips, and matches Foundation's base64 with the URL alphabet")
    func matchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let data = Data((0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            let expected = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(data) == expected)
            #expect(Base64URL.decode(expected) == data)
        }
        let all = Data(0...255)
        #expect(Base64URL.decode(Base64URL.encode(all)) == all)
    }

    @Test("a value has one spelling: non-canonical trailing bits, padding and foreign characters are refused")
    func strict() {
        #expect(Base64URL.decode("Zg") != nil)
        for bad in ["Zh", "Zm9=", "Zg==", "Z", "Zm9vY", "Zm+v", "Zm/v", "Zm 9v", "Zm9v\n", "Zm9vÿ", "Zm9v\u{0}"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad.debugDescription)")
        }
    }
}
