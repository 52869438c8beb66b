import BioAuthCore
import Crypto
import Foundation
import Testing

@Suite("Signed payload v1")
struct SignedPayloadTests {
    struct VectorFile: Decodable {
        struct Vector: Decodable {
            let name, purpose, relyingPartyId, challengeHex, keyIdHex, counter, transactionHashHex: String
            let privateKeyScalarHex, publicKeyX963Hex, payloadHex, signatureDerHex: String
        }
        let vectors: [Vector]
    }

    static func vectors() throws -> [VectorFile.Vector] {
        let url = try #require(Bundle.module.url(forResource: "signed-payload-v1", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url)).vectors
    }

    @Test("the published vectors (made by an independent implementation) encode and verify byte for byte")
    func vectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 6)
        for vector in vectors {
            let publicKey = try DevicePublicKey(x963Representation: try hex(vector.publicKeyX963Hex))
            #expect(publicKey.keyID == (try hex(vector.keyIdHex)), "\(vector.name)")
            let payload = try SignedPayload(
                purpose: .init(rawValue: vector.purpose),
                relyingPartyID: vector.relyingPartyId,
                challenge: try hex(vector.challengeHex),
                keyID: publicKey.keyID,
                counter: try #require(UInt64(vector.counter)),
                transactionHash: try hex(vector.transactionHashHex)
            )
            #expect(payload.bytes == (try hex(vector.payloadHex)), "\(vector.name)")
            #expect(publicKey.isValidSignature(try hex(vector.signatureDerHex), for: payload.bytes), "\(vector.name)")
            // The published private scalar is the key the vector was made with.
            let privateKey = try P256.Signing.PrivateKey(rawRepresentation: try hex(vector.privateKeyScalarHex))
            #expect(privateKey.publicKey.x963Representation == publicKey.x963Representation)
        }
    }

    @Test("a signature is bound to every field: purpose, relying party, challenge, key, counter, transaction")
    func everyFieldIsBound() throws {
        let vector = try #require(try Self.vectors().first { $0.purpose == "payment" })
        let publicKey = try DevicePublicKey(x963Representation: try hex(vector.publicKeyX963Hex))
        let signature = try hex(vector.signatureDerHex)
        let challenge = try hex(vector.challengeHex)
        let transaction = try hex(vector.transactionHashHex)
        func verifies(_ payload: SignedPayload) -> Bool { publicKey.isValidSignature(signature, for: payload.bytes) }
        let genuine = try SignedPayload(
            purpose: .payment,
            relyingPartyID: "bank.example",
            challenge: challenge,
            keyID: publicKey.keyID,
            counter: 7,
            transactionHash: transaction
        )
        #expect(verifies(genuine))
        var otherTransaction = transaction
        otherTransaction[0] ^= 1
        var otherChallenge = challenge
        otherChallenge[31] ^= 1
        let tampered: [SignedPayload] = [
            try SignedPayload(
                purpose: .payment,
                relyingPartyID: "evil.example",
                challenge: challenge,
                keyID: publicKey.keyID,
                counter: 7,
                transactionHash: transaction
            ),
            try SignedPayload(
                purpose: .payment,
                relyingPartyID: "bank.example",
                challenge: otherChallenge,
                keyID: publicKey.keyID,
                counter: 7,
                transactionHash: transaction
            ),
            try SignedPayload(
                purpose: .payment,
                relyingPartyID: "bank.example",
                challenge: challenge,
                keyID: Data(repeating: 1, count: 32),
                counter: 7,
                transactionHash: transaction
            ),
            try SignedPayload(
                purpose: .payment,
                relyingPartyID: "bank.example",
                challenge: challenge,
                keyID: publicKey.keyID,
                counter: 8,
                transactionHash: transaction
            ),
            try SignedPayload(
                purpose: .payment,
                relyingPartyID: "bank.example",
                challenge: challenge,
                keyID: publicKey.keyID,
                counter: 7,
                transactionHash: otherTransaction
            ),
            try SignedPayload(purpose: .login, relyingPartyID: "bank.example", challenge: challenge, keyID: publicKey.keyID, counter: 7),
        ]
        for payload in tampered { #expect(!verifies(payload)) }
    }

    @Test("wrong field sizes are refused")
    func fieldSizes() {
        let ok = Data(repeating: 7, count: 32)
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .login, relyingPartyID: "rp", challenge: Data(count: 31), keyID: ok, counter: 0)
        }
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .login, relyingPartyID: "rp", challenge: ok, keyID: Data(count: 33), counter: 0)
        }
        #expect(throws: SignedPayloadError.self) { try SignedPayload(purpose: .login, relyingPartyID: "", challenge: ok, keyID: ok, counter: 0) }
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .login, relyingPartyID: String(repeating: "a", count: 256), challenge: ok, keyID: ok, counter: 0)
        }
        #expect(throws: SignedPayloadError.self) { try SignedPayload(purpose: .payment, relyingPartyID: "rp", challenge: ok, keyID: ok, counter: 0) }
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .login, relyingPartyID: "rp", challenge: ok, keyID: ok, counter: 0, transactionHash: ok)
        }
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .init(rawValue: "Login"), relyingPartyID: "rp", challenge: ok, keyID: ok, counter: 0)
        }
    }

    @Test("the counter is 0 to 2^63 - 1, the range the JSON API can carry; larger values are refused, not sent")
    func counterRange() throws {
        let ok = Data(repeating: 7, count: 32)
        let largest = try SignedPayload(purpose: .login, relyingPartyID: "rp", challenge: ok, keyID: ok, counter: SignedPayload.maxCounter)
        #expect(largest.counter == UInt64(Int64.max))
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .login, relyingPartyID: "rp", challenge: ok, keyID: ok, counter: SignedPayload.maxCounter + 1)
        }
        #expect(throws: SignedPayloadError.self) { try SignedPayload(purpose: .login, relyingPartyID: "rp", challenge: ok, keyID: ok, counter: .max) }
    }

    @Test("base64url is strict: no padding, no standard-base64 characters, canonical only")
    func base64url() {
        let data = Data([0xFB, 0xFF, 0xBF, 0x00, 0x01])
        #expect(Base64URL.encode(data) == "-_-_AAE")
        #expect(Base64URL.decode("-_-_AAE") == data)
        #expect(Base64URL.decode("") == Data())
        for bad in ["-_-_AAE=", "+/+/AAE", "-_-_ AAE", "A", "-_-_AAF", "ab\n", "é"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad.debugDescription)")
        }
    }
}

func hex(_ text: String) throws -> Data {
    guard text.count % 2 == 0 else { throw HexError() }
    var data = Data()
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        guard let byte = UInt8(text[index..<next], radix: 16) else { throw HexError() }
        data.append(byte)
        index = next
    }
    return data
}

struct HexError: Error {}
