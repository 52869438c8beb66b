import BioAuthCore
import Crypto
import Foundation
import Testing

@Suite("Device public keys")
struct DevicePublicKeyTests {
    @Test("the key id is SHA-256 of the 65-byte X9.63 key")
    func keyID() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try DevicePublicKey(x963Representation: privateKey.publicKey.x963Representation)
        #expect(key.x963Representation.count == 65)
        #expect(key.keyID == Data(SHA256.hash(data: privateKey.publicKey.x963Representation)))
        #expect(key == DevicePublicKey(privateKey.publicKey))
    }

    @Test("wrong length, compressed points and points off the curve are refused with their own codes")
    func malformed() throws {
        let good = P256.Signing.PrivateKey().publicKey.x963Representation
        #expect(throws: DeviceKeyFormatError.self) { try DevicePublicKey(x963Representation: good.dropLast()) }
        #expect(throws: DeviceKeyFormatError.self) { try DevicePublicKey(x963Representation: Data()) }
        do {
            _ = try DevicePublicKey(x963Representation: good.prefix(64))
            Issue.record("accepted 64 bytes")
        } catch { #expect(error.code == .wrongLength) }
        var compressedLead = good
        compressedLead[0] = 0x02
        do {
            _ = try DevicePublicKey(x963Representation: compressedLead)
            Issue.record("accepted a non-0x04 point")
        } catch { #expect(error.code == .notUncompressed) }
        var offCurve = good
        offCurve[64] ^= 0x01
        do {
            _ = try DevicePublicKey(x963Representation: offCurve)
            Issue.record("accepted a point off the curve")
        } catch { #expect(error.code == .notOnCurve) }
    }

    @Test("signatures verify only for the signed message, the signing key and well-formed DER")
    func signatures() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = DevicePublicKey(privateKey.publicKey)
        let message = Data("pay 8800 CNY".utf8)
        let signature = try privateKey.signature(for: message).derRepresentation
        #expect(key.isValidSignature(signature, for: message))
        #expect(!key.isValidSignature(signature, for: Data("pay 9900 CNY".utf8)))
        #expect(!DevicePublicKey(P256.Signing.PrivateKey().publicKey).isValidSignature(signature, for: message))
        #expect(!key.isValidSignature(Data(), for: message))
        #expect(!key.isValidSignature(Data(repeating: 0x30, count: 72), for: message))
    }

    @Test("JSON carries the key as base64 and refuses a bad key")
    func codable() throws {
        let key = DevicePublicKey(P256.Signing.PrivateKey().publicKey)
        let data = try JSONEncoder().encode([key])
        #expect(try JSONDecoder().decode([DevicePublicKey].self, from: data) == [key])
        let bad = Data(#"["BAAA"]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DevicePublicKey].self, from: bad) }
        let notBase64 = Data(#"["%%%"]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DevicePublicKey].self, from: notBase64) }
    }

    @Test("biometry kinds have stable wire values and unknown ones are refused")
    func biometryKinds() throws {
        #expect(BiometryKind.allKnown.map(\.rawValue) == ["none", "touchID", "faceID", "opticID"])
        #expect(BiometryKind(rawValue: "faceID") == .faceID)
        #expect(BiometryKind(rawValue: "FaceID") == nil)
        #expect(try JSONDecoder().decode([BiometryKind].self, from: Data(#"["opticID"]"#.utf8)) == [.opticID])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([BiometryKind].self, from: Data(#"["iris"]"#.utf8)) }
    }
}
