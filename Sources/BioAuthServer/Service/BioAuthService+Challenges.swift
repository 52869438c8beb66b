import BioAuthCore
import Foundation
import SQLKit

/// A challenge as the API returns it.
struct IssuedChallenge: Sendable {
    var id: String
    var challenge: Data
    var purpose: SignedPayload.Purpose
    var keyID: Data?
    var expiresAt: Date
}

/// What a challenge must be bound to for the operation that consumes it.
struct ChallengeBinding: Sendable {
    var purpose: SignedPayload.Purpose
    var account: String
    var session: String?
    var device: String?
}

extension BioAuthService {
    /// Stores a new single-use challenge: 32 random bytes bound to `binding`.
    func issueChallenge(_ binding: ChallengeBinding, lifetime: TimeInterval, keyID: Data?, on db: any SQLDatabase)
        async throws -> IssuedChallenge
    {
        let challenge = IssuedChallenge(
            id: UUID().uuidString.lowercased(), challenge: random.bytes(32), purpose: binding.purpose, keyID: keyID,
            expiresAt: now.addingTimeInterval(lifetime))
        try await db.insert(into: "challenges")
            .columns("id", "purpose", "challenge", "account_id", "session_id", "device_id", "payment_id", "created_at", "expires_at", "consumed_at")
            .values(
                SQLBind(challenge.id), SQLBind(binding.purpose.rawValue), SQLBind(Base64URL.encode(challenge.challenge)),
                SQLBind(binding.account), SQLBind(binding.session), SQLBind(binding.device), SQLBind(String?.none),
                SQLBind(now.millisecondsSince1970), SQLBind(challenge.expiresAt.millisecondsSince1970), SQLBind(Int64?.none))
            .run()
        return challenge
    }

    /// Uses up the challenge `id` if it is live and bound to `binding`, returning its bytes.
    ///
    /// A challenge issued for something else is refused without being used up (it is not the caller's to
    /// burn); a used one is a replay and is audited.
    func consumeChallenge(_ id: String, for binding: ChallengeBinding, on db: any SQLDatabase) async throws -> Outcome<Data> {
        guard Validation.isIssuedID(id),
            let row = try await db.select()
                .columns("purpose", "challenge", "account_id", "session_id", "device_id", "expires_at", "consumed_at")
                .from("challenges").where("id", .equal, id).first()
        else { return .failure(APIError(.challengeNotFound, "There is no such challenge.")) }

        let matches =
            try row.decode(column: "purpose", as: String.self) == binding.purpose.rawValue
            && row.decode(column: "account_id", as: String.self) == binding.account
            && (binding.session == nil || row.decode(column: "session_id", as: String?.self) == binding.session)
            && (binding.device == nil || row.decode(column: "device_id", as: String?.self) == binding.device)
        guard matches else {
            return .failure(APIError(.challengeMismatch, "The challenge was issued for another purpose, account, session or key."))
        }
        guard try row.decode(column: "consumed_at", as: Int64?.self) == nil else {
            try await audit(.challengeReplay, succeeded: false, account: binding.account, device: binding.device, code: "challenge_used", on: db)
            return .failure(APIError(.challengeUsed, "The challenge was already used."))
        }
        guard Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)) > now else {
            return .failure(APIError(.challengeExpired, "The challenge expired. Ask for a new one."))
        }
        try await db.update("challenges").set("consumed_at", to: now.millisecondsSince1970)
            .where("id", .equal, id).where("consumed_at", .is, SQLLiteral.null).run()
        guard let bytes = Base64URL.decode(try row.decode(column: "challenge", as: String.self)) else {
            throw APIError.internalError
        }
        return .success(bytes)
    }

    /// Checks `signature` over the payload for `purpose`. When it fails, tells a signature made for another
    /// purpose apart from one that is simply wrong.
    func checkSignature(
        _ signature: Data, by key: DevicePublicKey, purpose: SignedPayload.Purpose, challenge: Data, counter: UInt64
    ) throws -> APIError? {
        func payload(_ purpose: SignedPayload.Purpose) throws -> Data {
            try SignedPayload(
                purpose: purpose, relyingPartyID: configuration.relyingPartyID, challenge: challenge, keyID: key.keyID,
                counter: counter
            ).bytes
        }
        if key.isValidSignature(signature, for: try payload(purpose)) { return nil }
        for other in [SignedPayload.Purpose.register, .login] where other != purpose {
            if key.isValidSignature(signature, for: try payload(other)) {
                return APIError(.signaturePurposeMismatch, "The signature was made for \(other), not \(purpose).")
            }
        }
        return APIError(.invalidSignature, "The signature does not verify with the registered key.")
    }
}
