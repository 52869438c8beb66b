import BioAuthCore
import Foundation

/// A device key's proof as a request sends it, decoded: which key signed, at which counter, the signature, and the App
/// Attest assertion over the same payload (the secure environment check). Every ceremony that a device key proves
/// (sign-in, payment, approval, setting the PIN, registration) decodes it the same way and hands it to one step
/// (``BioAuthService/verifyProof(_:_:early:on:)``).
struct DeviceProof: Sendable {
    var keyID: Data
    var counter: UInt64
    var signature: Data
    /// The App Attest assertion over the signed payload, when the app sent one.
    var assertion: Data?

    /// Decodes and checks every field; throws before anything is read or written.
    init(keyID: String, counter: Int64, signature: String, appAttestAssertion: String? = nil) throws {
        self.keyID = try Validation.bytes(keyID, field: "keyId", length: 32)
        self.counter = try Validation.counter(counter)
        self.signature = try Validation.bytes(signature, field: "signature")
        self.assertion = try Validation.appAttestAssertion(appAttestAssertion)
    }

    /// A proof from values already decoded (a registration's, whose key arrives whole).
    init(keyID: Data, counter: UInt64, signature: Data, assertion: Data? = nil) {
        self.keyID = keyID
        self.counter = counter
        self.signature = signature
        self.assertion = assertion
    }
}

/// What one ceremony asks of a device proof: the purpose of the signed payload, where its challenge comes from, what
/// else the signature binds, whose key it must be, and how a refusal is recorded.
struct ProofCeremony: Sendable {
    /// Where the challenge the key signed comes from.
    enum Challenge: Sendable {
        /// A single-use challenge this server issued, used up by the proof. It must be bound to the ceremony's purpose,
        /// the key's account and device, and to `session` and `payment` when they are given.
        case issued(id: String, session: String? = nil, payment: String? = nil)
        /// The challenge of a record that is answered once anyway (an approval request): nothing to use up.
        case held(Data)
    }

    /// What the signature binds besides the challenge: the hash the server computes from its own record, the one the
    /// device says it signed, and the refusal when they differ.
    struct Binding: Sendable {
        var expected: Data
        var signed: Data
        var mismatch: APIError

        init(expected: Data, signed: Data, mismatch: APIError) {
            self.expected = expected
            self.signed = signed
            self.mismatch = mismatch
        }

        /// A hash the device does not send: the server computes it from its own state (a step-up's session and action), so
        /// only the signature can disagree with it (`invalid_signature`), never a sent hash.
        init(computed hash: Data) {
            self.init(expected: hash, signed: hash, mismatch: .internalError)
        }
    }

    var purpose: SignedPayload.Purpose
    /// The account the key must belong to; nil when the key says whose it is (a sign-in).
    var account: String?
    var challenge: Challenge
    var binds: Binding? = nil
    /// Whether the proof carries the App Attest assertion the deployment's policy checks. Setting the payment PIN's does
    /// not: its contract has no assertion, so under `require` it is not refused for lacking one.
    var checksAppAttest = true
    var refusals: ProofRefusals

    /// The hash the payload carries (empty when the ceremony binds none).
    var transactionHash: Data { binds?.expected ?? Data() }

    /// What an issued challenge must be bound to for `device` (nil: a key presented for registration) of `account`.
    func challengeBinding(account: String, device: String?) -> ChallengeBinding? {
        guard case .issued(_, let session, let payment) = challenge else { return nil }
        return ChallengeBinding(purpose: purpose, account: account, session: session, device: device, payment: payment)
    }
}

/// How a ceremony's refused proofs are recorded: audited as the ceremony's own kind (a payment's as a failed
/// authorization, an approval's as a failed approval, never as a failed sign-in), and, for a payment, counted toward the
/// payment's lock.
struct ProofRefusals: Sendable {
    var kind: AuditKind
    /// The session asking, recorded with the refusal.
    var session: String? = nil
    /// The service client whose request the ceremony answers (an approval's).
    var client: String? = nil
    /// The payment a refusal counts against: it locks after too many.
    var payment: PaymentInfo? = nil
}

/// A device proof that passed every check: the device whose key signed (its counter advanced) and the payload signed.
struct VerifiedProof: Sendable {
    var device: DeviceInfo
    var payload: SignedPayload
}
