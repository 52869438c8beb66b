import BioAuthCore
import Crypto
import Foundation
import Testing

/// The canonical approval, the `approval` signed payload and the signed approval, against vectors written by an
/// independent implementation (scripts/approval-vectors.py).
@Suite("Approval formats")
struct ApprovalFormatTests {
    struct VectorFile: Decodable {
        struct Approval: Decodable {
            var name, approvalId, kind, requester, bindingMessage, channelBrowser, channelPlatform, channelAddress: String
            var number: UInt8
            var createdAtMs: Int64
            var bytesHex, sha256Hex: String
        }
        struct Payload: Decodable {
            var relyingPartyId, challengeHex, keyIdHex, approvalHashHex, bytesHex, publicKeyX963Hex, signatureDerHex: String
            var counter: UInt64
        }
        struct Signed: Decodable {
            var receiptPublicKeyX963Hex, signedBytesHex: String
            var approval: SignedApproval
        }
        var approvals: [Approval]
        var signedPayload: Payload
        var signedApproval: Signed
    }

    static func vectors() throws -> VectorFile {
        let url = try #require(Bundle.module.url(forResource: "approval-v1", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    }

    @Test("the published approvals encode and hash byte for byte, and the phone's signature over one verifies")
    func canonicalBytes() throws {
        let file = try Self.vectors()
        #expect(file.approvals.count == 4 && file.approvals.contains { $0.kind == "bind_device" })
        for vector in file.approvals {
            let approval = try CanonicalApproval(
                approvalID: vector.approvalId,
                kind: try #require(CanonicalApproval.Kind(rawValue: vector.kind)),
                requester: vector.requester,
                bindingMessage: vector.bindingMessage,
                channel: .init(browser: vector.channelBrowser, platform: vector.channelPlatform, address: vector.channelAddress),
                number: vector.number,
                createdAtMs: vector.createdAtMs
            )
            #expect(approval.bytes == (try hex(vector.bytesHex)), "\(vector.name)")
            #expect(approval.hash == (try hex(vector.sha256Hex)), "\(vector.name)")
        }
        let vector = file.signedPayload
        let payload = try SignedPayload(
            purpose: .approval,
            relyingPartyID: vector.relyingPartyId,
            challenge: try hex(vector.challengeHex),
            keyID: try hex(vector.keyIdHex),
            counter: vector.counter,
            transactionHash: try hex(vector.approvalHashHex)
        )
        #expect(payload.bytes == (try hex(vector.bytesHex)))
        let key = try DevicePublicKey(x963Representation: try hex(vector.publicKeyX963Hex))
        #expect(key.isValidSignature(try hex(vector.signatureDerHex), for: payload.bytes))
        #expect(throws: SignedPayloadError.self) {
            try SignedPayload(purpose: .approval, relyingPartyID: "bank.example", challenge: Data(count: 32), keyID: Data(count: 32), counter: 1)
        }
    }

    @Test("a signed approval from the vectors verifies with its receipt key; any changed field, or another key, does not")
    func signedApproval() throws {
        let vector = try Self.vectors().signedApproval
        let key = try DevicePublicKey(x963Representation: try hex(vector.receiptPublicKeyX963Hex))
        let approval = vector.approval
        #expect(approval.signedBytes() == (try hex(vector.signedBytesHex)))
        #expect(approval.isValid(signedBy: key))
        var changes: [(String, (inout SignedApproval) -> Void)] = [
            ("requester", { $0.requester = "Bank Call Centre" }), ("number", { $0.number = 48 }),
            ("browser", { $0.channelBrowser = "Safari" }), ("address", { $0.channelAddress = "198.51.100.9" }),
            ("account", { $0.accountId = "someone-else" }), ("amr", { $0.amr = ["hwk", "fpt"] }),
            ("time", { $0.approvedAtMs += 1 }), ("kind", { $0.kind = "operation" }),
        ]
        changes.append(("message", { $0.bindingMessage = "Sign in" }))
        for (name, change) in changes {
            var changed = approval
            change(&changed)
            #expect(!changed.isValid(signedBy: key), "changing the \(name) breaks it")
        }
        let other = try DevicePublicKey(x963Representation: P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(!approval.isValid(signedBy: other))
    }

    @Test(
        "refused: an operation without a message, a sign-in with one, a sign-in's or a binding's number outside 10-99, a binding without the device, an empty requester"
    )
    func refusedFields() {
        func make(_ kind: CanonicalApproval.Kind, message: String = "", number: UInt8, requester: String = "Bank") throws {
            _ = try CanonicalApproval(approvalID: "a", kind: kind, requester: requester, bindingMessage: message, number: number, createdAtMs: 1)
        }
        #expect(throws: ApprovalFormatError.self) { try make(.operation, number: 0) }
        #expect(throws: ApprovalFormatError.self) { try make(.signIn, message: "Pay", number: 47) }
        #expect(throws: ApprovalFormatError.self) { try make(.signIn, number: 9) }
        #expect(throws: ApprovalFormatError.self) { try make(.signIn, number: 100) }
        #expect(throws: ApprovalFormatError.self) { try make(.operation, message: "Pay", number: 47) }
        #expect(throws: ApprovalFormatError.self) { try make(.operation, message: "Pay", number: 0, requester: "") }
        #expect((try? make(.signIn, number: 99)) != nil)
        #expect(throws: ApprovalFormatError.self) { try make(.bindDevice, number: 47) }
        #expect(throws: ApprovalFormatError.self) { try make(.bindDevice, message: "Alice's iPad · Touch ID", number: 0) }
        #expect((try? make(.bindDevice, message: "Alice's iPad · Touch ID", number: 47)) != nil)
    }
}
