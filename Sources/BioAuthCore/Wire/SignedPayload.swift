import Crypto
import Foundation

/// The exact bytes a device key signs: versioned, domain-separated and deterministic.
///
/// ```
/// "BIOAUTH" 0x00          8 bytes, domain separation
/// version                 1 byte  (1)
/// purpose                 u16 length ‖ ASCII ("register", "login", "payment", "pin", "approval", "stepup")
/// relying party id        u16 length ‖ UTF-8
/// challenge               u16 length ‖ 32 bytes
/// key id                  u16 length ‖ 32 bytes (SHA-256 of the X9.63 public key)
/// counter                 u64, big-endian
/// transaction hash        u16 length ‖ 0 bytes, or 32 bytes for "payment", "approval" and "stepup"
/// ```
///
/// The signature is ECDSA P-256 with SHA-256 over these bytes, DER-encoded. docs/PROTOCOL.md has test vectors.
public struct SignedPayload: Hashable, Sendable {
    /// What a signature is for. A signature for one purpose is never accepted for another.
    public struct Purpose: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// Registering a device key (proof of possession).
        public static let register = Purpose(rawValue: "register")
        /// Biometric sign-in.
        public static let login = Purpose(rawValue: "login")
        /// Authorizing a payment; the payload then carries the transaction hash.
        public static let payment = Purpose(rawValue: "payment")
        /// Setting or changing the payment PIN without the account password.
        public static let paymentPIN = Purpose(rawValue: "pin")
        /// Answering an approval request (a sign-in or an operation that started on another channel); the payload then
        /// carries the hash of the ``CanonicalApproval``.
        public static let approval = Purpose(rawValue: "approval")
        /// Raising a session's assurance for a sensitive action (a step-up); the payload then carries the hash of the
        /// ``CanonicalStepUp``: the session and the action.
        public static let stepUp = Purpose(rawValue: "stepup")

        /// Whether a payload for this purpose carries a 32-byte hash of what was shown.
        public var carriesHash: Bool { self == .payment || self == .approval || self == .stepUp }

        /// The purpose as signed: lowercase ASCII letters.
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }

    /// The current format version.
    public static let version: UInt8 = 1
    /// The leading bytes of every payload: `"BIOAUTH"` and a zero byte.
    public static let domain = CanonicalWriter.domain

    /// What the signature is for.
    public let purpose: Purpose
    /// The server's relying-party id, e.g. `"bank.example"`.
    public let relyingPartyID: String
    /// The server's challenge (32 bytes).
    public let challenge: Data
    /// The signing key's id (32 bytes).
    public let keyID: Data
    /// The key's signature counter, 0 to ``maxCounter``; the server accepts only increasing values.
    public let counter: UInt64

    /// The largest counter: 2^63 − 1. The payload carries 8 bytes, but the JSON API takes the counter as a signed
    /// 64-bit integer, so no larger value could ever be sent. A key that reaches it cannot sign again (at one
    /// signature a second, after 2.9 × 10^11 years): register a new one.
    /// SHA-256 of the canonical transaction for payments, of the canonical approval for approvals, of the canonical
    /// step-up for step-ups; empty otherwise.
    public let transactionHash: Data

    /// 2^63 − 1, the largest counter (see ``counter``).
    public static let maxCounter = UInt64(Int64.max)

    /// A payload with these fields.
    ///
    /// - Throws: ``SignedPayloadError`` when a field has the wrong size: challenge and key id are 32 bytes,
    ///   the transaction hash is 32 bytes for payments, approvals and step-ups and empty otherwise, the relying-party id is 1 to
    ///   255 bytes, the counter is at most ``maxCounter``.
    public init(
        purpose: Purpose,
        relyingPartyID: String,
        challenge: Data,
        keyID: Data,
        counter: UInt64,
        transactionHash: Data = Data()
    ) throws(SignedPayloadError) {
        guard challenge.count == 32 else { throw SignedPayloadError("the challenge must be 32 bytes") }
        guard keyID.count == 32 else { throw SignedPayloadError("the key id must be 32 bytes") }
        guard (1...255).contains(relyingPartyID.utf8.count) else {
            throw SignedPayloadError("the relying-party id must be 1 to 255 bytes")
        }
        guard !purpose.rawValue.isEmpty, purpose.rawValue.utf8.allSatisfy({ (0x61...0x7A).contains($0) }) else {
            throw SignedPayloadError("the purpose must be lowercase ASCII letters")
        }
        guard counter <= Self.maxCounter else { throw SignedPayloadError("the counter must be at most 2^63 - 1") }
        let expectedHashLength = purpose.carriesHash ? 32 : 0
        guard transactionHash.count == expectedHashLength else {
            throw SignedPayloadError("the transaction hash must be \(expectedHashLength) bytes for \(purpose)")
        }
        self.purpose = purpose
        self.relyingPartyID = relyingPartyID
        self.challenge = challenge
        self.keyID = keyID
        self.counter = counter
        self.transactionHash = transactionHash
    }

    /// The bytes to sign.
    public var bytes: Data {
        var writer = CanonicalWriter(version: Self.version)
        writer.field(purpose.rawValue)
        writer.field(relyingPartyID)
        writer.field(challenge)
        writer.field(keyID)
        writer.uint64(counter)
        writer.field(transactionHash)
        return writer.bytes
    }
}

extension SignedPayload {
    /// SHA-256 of ``bytes``: the client-data hash of the App Attest attestation or assertion sent in the same
    /// request, which binds the secure environment check to this exact payload.
    public var appAttestClientDataHash: Data { Data(SHA256.hash(data: bytes)) }
}

/// A signed payload field has the wrong size or form.
public struct SignedPayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
