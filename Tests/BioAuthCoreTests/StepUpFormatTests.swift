import BioAuthCore
import Foundation
import Testing

/// The canonical step-up and the `stepup` signed payload, against vectors written by an independent implementation
/// (scripts/step-up-vectors.py).
@Suite("Step-up format")
struct StepUpFormatTests {
    struct VectorFile: Decodable {
        struct StepUp: Decodable {
            var name, sessionId, action, bytesHex, sha256Hex: String
        }
        struct Payload: Decodable {
            var relyingPartyId, challengeHex, keyIdHex, stepUpHashHex, bytesHex, publicKeyX963Hex, signatureDerHex: String
            var counter: UInt64
        }
        var stepUps: [StepUp]
        var signedPayload: Payload
    }

    static func vectors() throws -> VectorFile {
        let url = try #require(Bundle.module.url(forResource: "step-up-v1", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    }

    @Test("the published step-ups encode and hash byte for byte, and the phone's signature over one verifies")
    func canonicalBytes() throws {
        let file = try Self.vectors()
        #expect(file.stepUps.count == 3 && file.stepUps.contains { $0.action.isEmpty })
        for vector in file.stepUps {
            let stepUp = try CanonicalStepUp(sessionID: vector.sessionId, action: StepUpAction(rawValue: vector.action))
            #expect(stepUp.bytes == (try hex(vector.bytesHex)), "\(vector.name)")
            #expect(stepUp.hash == (try hex(vector.sha256Hex)), "\(vector.name)")
        }
        let vector = file.signedPayload
        let payload = try SignedPayload(
            purpose: .stepUp,
            relyingPartyID: vector.relyingPartyId,
            challenge: try hex(vector.challengeHex),
            keyID: try hex(vector.keyIdHex),
            counter: vector.counter,
            transactionHash: try hex(vector.stepUpHashHex)
        )
        #expect(payload.bytes == (try hex(vector.bytesHex)))
        let key = try DevicePublicKey(x963Representation: try hex(vector.publicKeyX963Hex))
        #expect(key.isValidSignature(try hex(vector.signatureDerHex), for: payload.bytes))
        // The same signature does not verify for another action or another session.
        let otherAction = try SignedPayload(
            purpose: .stepUp,
            relyingPartyID: vector.relyingPartyId,
            challenge: try hex(vector.challengeHex),
            keyID: try hex(vector.keyIdHex),
            counter: vector.counter,
            transactionHash: try CanonicalStepUp(sessionID: file.stepUps[1].sessionId, action: .changePassword).hash
        )
        #expect(!key.isValidSignature(try hex(vector.signatureDerHex), for: otherAction.bytes))
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .stepUp, relyingPartyID: "bank.example", challenge: Data(count: 32), keyID: Data(count: 32), counter: 1)
        }
    }

    @Test(
        "a session id or an action out of range is refused",
        arguments: [
            ("", ""), (String(repeating: "s", count: 256), ""), ("s", "Change_Password"), ("s", "change-password"),
            ("s", String(repeating: "a", count: 65)),
        ]
    )
    func outOfRange(session: String, action: String) {
        #expect(throws: StepUpFormatError.self) { try CanonicalStepUp(sessionID: session, action: StepUpAction(rawValue: action)) }
    }
}
