import BioAuthCore
import Foundation
import SQLKit

/// A challenge as the API returns it.
struct IssuedChallenge: Sendable {
    var id: String
    var challenge: Data
    var purpose: SignedPayload.Purpose
    var keyID: Data?
    var paymentID: String?
    var expiresAt: Date
}

/// What a challenge must be bound to for the operation that consumes it.
struct ChallengeBinding: Sendable {
    var purpose: SignedPayload.Purpose
    var account: String
    var session: String?
    var device: String?
    var payment: String? = nil

    /// Whether the challenge `stored` may be used for this operation. A binding with no session or no device accepts
    /// any; the payment must be the same, or none on both sides.
    func matches(_ stored: ChallengesTable.Stored) -> Bool {
        stored.purpose == purpose.rawValue && stored.accountID == account && (session == nil || stored.sessionID == session)
            && (device == nil || stored.deviceID == device) && stored.paymentID == payment
    }
}

/// Thrown inside a unit of work run by ``BioAuthService/writingFirst(_:)`` when a check fails after its write: the unit is
/// rolled back whole, and the request runs again the way that checks before it writes, which refuses it and records the
/// refusal (or, for a payment whose idempotency key was taken, replays the stored response).
struct CheckBeforeWriting: Error {}

extension BioAuthService {
    /// Runs `body`, a unit of work that writes before it checks (a device's counter advanced in the statement that finds
    /// the device, a payment stored before its idempotency key is looked for: one round trip fewer each), at READ
    /// COMMITTED (``TransactionIsolation``). Nil, with nothing of it kept, when a check fails (``CheckBeforeWriting``) or it
    /// refuses (a ``Refusal``, whose writes are dropped too): the caller then runs the request the way that checks first,
    /// which refuses it and records the refusal once (or replays a payment's stored response). A refused request so costs
    /// a second unit of work, never a counter.
    func writingFirst<R: Sendable>(_ body: @Sendable @escaping (any SQLDatabase) async throws -> R) async throws -> R? {
        do {
            return try await database.transaction(isolation: .readCommitted, body)
        } catch is CheckBeforeWriting {
            return nil
        } catch is Refusal {
            return nil
        }
    }

    /// Stores a new single-use challenge: 32 random bytes bound to `binding`.
    func issueChallenge(
        _ binding: ChallengeBinding,
        lifetime: TimeInterval,
        keyID: Data?,
        on db: any SQLDatabase
    )
        async throws -> IssuedChallenge
    {
        let challenge = IssuedChallenge(
            id: newID(),
            challenge: random.bytes(32),
            purpose: binding.purpose,
            keyID: keyID,
            paymentID: binding.payment,
            expiresAt: now.addingTimeInterval(lifetime)
        )
        try await db.challenges.insert(challenge, binding: binding, at: now.millisecondsSince1970)
        signatureInputs.remember(challenge: challenge.challenge, id: challenge.id)
        return challenge
    }

    /// Uses up the challenge `id` if it is live and bound to `binding`, returning its bytes.
    ///
    /// A challenge issued for something else is refused without being used up (it is not the caller's to
    /// burn); a used one is a replay and is audited. A live challenge is taken in one statement; only a refusal reads it
    /// again, to tell which refusal it is.
    func consumeChallenge(_ id: String, for binding: ChallengeBinding, on db: any SQLDatabase) async throws -> Data {
        guard Validation.isIssuedID(id) else { throw Refusal(Self.challengeNotFound) }
        let at = now.millisecondsSince1970
        if let taken = try await db.challenges.take(id, at: at) {
            signatureInputs.forget(challenge: id)
            guard
                binding.matches(taken)
            else {
                try await db.challenges.release(id)
                throw Refusal(Self.challengeMismatch)
            }
            guard let bytes = taken.challenge else { throw APIError.internalError }
            return bytes
        }
        guard let stored = try await db.challenges.find(id) else { throw Refusal(Self.challengeNotFound) }
        signatureInputs.forget(challenge: id)
        guard
            binding.matches(stored)
        else { throw Refusal(Self.challengeMismatch) }
        try await requireUnused(stored.use, account: binding.account, device: binding.device, on: db)
        // Live (unused and unexpired) but not taken above: a unit of work that took it and handed it back (it was bound to
        // something else) committed in between. Use it as the statement above would have.
        guard try await db.challenges.markConsumed(id, at: at) else {
            // Used by a request that committed after this one read the challenge: a replay all the same.
            try await refuseReplay(account: binding.account, device: binding.device, on: db)
        }
        guard let bytes = stored.challenge else { throw APIError.internalError }
        return bytes
    }

    private static let challengeNotFound = APIError(.challengeNotFound, "There is no such challenge.")
    private static let challengeMismatch = APIError(
        .challengeMismatch,
        "The challenge was issued for another purpose, account, session, key or payment."
    )

    /// A second use of a challenge: audited with `account` and `device`, refused with `challenge_used`.
    func refuseReplay(account: String?, device: String?, on db: any SQLDatabase) async throws -> Never {
        try await recorder.audit(.challengeReplay, succeeded: false, account: account, device: device, code: "challenge_used", on: db)
        throw Refusal(APIError(.challengeUsed, "The challenge was already used."))
    }

    /// What every single-use challenge (a device key's or a passkey ceremony's) must pass before it is used up: not used
    /// before (a second use is a replay, audited with `account` and `device`) and not expired.
    func requireUnused(_ use: ChallengeUse, account: String?, device: String? = nil, on db: any SQLDatabase) async throws {
        guard !use.consumed else { try await refuseReplay(account: account, device: device, on: db) }
        guard use.expiresAt > now else {
            throw Refusal(APIError(.challengeExpired, "The challenge expired. Ask for a new one."))
        }
    }

    /// Checks `signature` over the payload for `purpose` (with `transactionHash` for payments). When it
    /// fails, tells a signature made for another purpose apart from one that is simply wrong.
    ///
    /// `early` is the outcome of ``earlyCheck(_:keyID:challengeID:purpose:counter:transactionHash:)``; it stands in
    /// for verifying again only when it was made over these very inputs (the key and challenge read in this unit
    /// of work), and is ignored otherwise.
    func checkSignature(
        _ signature: Data,
        by key: DevicePublicKey,
        purpose: SignedPayload.Purpose,
        challenge: Data,
        counter: UInt64,
        transactionHash: Data = Data(),
        early: EarlySignatureCheck? = nil
    ) throws -> APIError? {
        func payload(_ purpose: SignedPayload.Purpose, _ hash: Data) throws -> Data {
            try signedPayload(purpose, by: key, challenge: challenge, counter: counter, transactionHash: hash).bytes
        }
        let valid: Bool
        if let early,
            early.covers(signature: signature, by: key, purpose: purpose, challenge: challenge, counter: counter, transactionHash: transactionHash)
        {
            valid = early.valid
        } else {
            valid = key.isValidSignature(signature, for: try payload(purpose, transactionHash))
        }
        if valid { return nil }
        for other in [SignedPayload.Purpose.register, .login, .paymentPIN] where other != purpose {
            if key.isValidSignature(signature, for: try payload(other, Data())) {
                return APIError(.signaturePurposeMismatch, "The signature was made for \(other), not \(purpose).")
            }
        }
        return APIError(.invalidSignature, "The signature does not verify with the registered key.")
    }

    /// Checks `signature` before the unit of work, on the request's own thread, when this server knows the key
    /// `keyID` and the challenge `challengeID` (``SignatureInputs``); `nil` when it does not. The outcome decides
    /// nothing by itself: it is handed to ``checkSignature(_:by:purpose:challenge:counter:transactionHash:early:)``,
    /// which uses it only if the key and challenge the unit of work reads are the ones checked here.
    func earlyCheck(
        _ signature: Data,
        keyID: Data,
        challengeID: String,
        purpose: SignedPayload.Purpose,
        counter: UInt64,
        transactionHash: Data = Data()
    ) -> EarlySignatureCheck? {
        guard let key = signatureInputs.key(id: keyID), let challenge = signatureInputs.challenge(challengeID),
            let payload = try? signedPayload(purpose, by: key, challenge: challenge, counter: counter, transactionHash: transactionHash)
        else { return nil }
        return EarlySignatureCheck(
            publicKey: key.x963Representation,
            purpose: purpose,
            challenge: challenge,
            counter: counter,
            transactionHash: transactionHash,
            signature: signature,
            valid: key.isValidSignature(signature, for: payload.bytes)
        )
    }

    /// The payload a device key signs for `purpose` (signed payload v1), which App Attest proofs also cover.
    func signedPayload(
        _ purpose: SignedPayload.Purpose,
        by key: DevicePublicKey,
        challenge: Data,
        counter: UInt64,
        transactionHash: Data = Data()
    ) throws -> SignedPayload {
        try SignedPayload(
            purpose: purpose,
            relyingPartyID: configuration.relyingPartyID,
            challenge: challenge,
            keyID: key.keyID,
            counter: counter,
            transactionHash: transactionHash
        )
    }

    /// The account's usable device for `keyID` (not another account's, not revoked), for payments and PINs.
    func accountDevice(keyID: Data, account: String, on db: any SQLDatabase) async throws -> DeviceInfo {
        let device = try await usableDevice(keyID: keyID, on: db)
        guard device.accountID == account else {
            throw Refusal(APIError(.deviceNotFound, "No device of this account is registered with this key."))
        }
        return device
    }

    /// Moves the device's counter forward, or refuses (and audits) a counter that did not increase.
    func advanceCounter(of device: DeviceInfo, to counter: UInt64, on db: any SQLDatabase) async throws -> APIError? {
        if counter > UInt64(device.counter), try await db.devices.advanceCounter(device.id, to: Int64(counter), at: now.millisecondsSince1970) {
            return nil
        }
        // Nothing stored: the counter did not increase, or (below SERIALIZABLE) a request that committed after this one
        // read the device revoked it or stored a higher counter first.
        if counter > UInt64(device.counter), let current = try await db.devices.find(device.id, account: device.accountID),
            current.revokedAt != nil
        {
            try await recorder.audit(.biometricSignIn, succeeded: false, account: device.accountID, device: device.id, code: "device_revoked", on: db)
            return APIError(.deviceRevoked, "This device was revoked. Sign in with your password.")
        }
        try await recorder.audit(
            .counterRegression,
            succeeded: false,
            account: device.accountID,
            device: device.id,
            code: "counter_not_increasing",
            on: db
        )
        return APIError(
            .counterNotIncreasing,
            "The signature counter did not increase (\(counter) after \(device.counter)); the key may have been copied."
        )
    }
}
