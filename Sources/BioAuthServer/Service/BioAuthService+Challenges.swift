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

    /// A challenge for `purpose` that the account's live key `rawKeyID` is to sign in `session` (setting the PIN, a
    /// step-up): bound to the purpose, the account, the session and the key's device, for a login challenge's lifetime.
    /// A revoked key's request is refused and recorded as `refusals` say.
    func issueSessionChallenge(
        _ purpose: SignedPayload.Purpose,
        keyID rawKeyID: String,
        session: AuthenticatedSession,
        refusals: ProofRefusals
    ) async throws -> IssuedChallenge {
        let keyID = try Validation.bytes(rawKeyID, field: "keyId", length: 32)
        return try await commit { db in
            let device = try await usableDevice(keyID: keyID, account: session.accountID, refusals: refusals, on: db)
            return try await issueChallenge(
                ChallengeBinding(purpose: purpose, account: session.accountID, session: session.sessionID, device: device.id),
                lifetime: configuration.loginChallengeLifetime,
                keyID: keyID,
                on: db
            )
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
}
