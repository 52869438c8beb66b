import BioAuthCore
import Foundation
import SQLKit

/// The one step every device-key ceremony takes: the key found and usable, its challenge used up, what the signature binds
/// compared, the signature checked, the App Attest assertion verified, the counter advanced. A ceremony (sign-in, payment,
/// approval, the payment PIN, registration) says what it asks in a ``ProofCeremony`` and gets a ``VerifiedProof`` back;
/// a check added here holds for all of them.
///
/// It has two forms. ``verifyProof(_:_:early:on:)`` checks before it writes and records every refusal as the ceremony's
/// own (``ProofRefusals``). ``verifyProofWritingFirst(_:_:early:on:)`` advances the counter in the statement that finds
/// the device, one round trip fewer, and throws ``CheckBeforeWriting`` on any failure so that its caller runs the first
/// form, which refuses and records. Both take the rows in one order: the challenge's, then the device's (its counter);
/// the ceremony's own record (a session's account, a payment, an approval) comes after.
extension BioAuthService {
    /// The proof checked before anything is written: the key's device found and usable for the ceremony, then the rest
    /// (``verifyProof(_:_:by:early:on:)``).
    func verifyProof(
        _ proof: DeviceProof,
        _ ceremony: ProofCeremony,
        early: EarlySignatureCheck? = nil,
        on db: any SQLDatabase
    ) async throws
        -> VerifiedProof
    {
        let device = try await usableDevice(keyID: proof.keyID, account: ceremony.account, refusals: ceremony.refusals, on: db)
        return try await verifyProof(proof, ceremony, by: device, early: early, on: db)
    }

    /// The proof of `device`, found already (an approval looks at the number the user picked in between): the challenge,
    /// what the signature binds, the signature, the assertion, then the counter. Each refusal is recorded as the
    /// ceremony's before it is thrown.
    func verifyProof(
        _ proof: DeviceProof,
        _ ceremony: ProofCeremony,
        by device: DeviceInfo,
        early: EarlySignatureCheck? = nil,
        on db: any SQLDatabase
    ) async throws -> VerifiedProof {
        let payload = try await checkSignedPayload(
            proof,
            by: device.publicKey,
            device: device.id,
            account: device.accountID,
            ceremony,
            early: early,
            on: db
        )
        do {
            if ceremony.checksAppAttest { try await verifyAssertion(proof.assertion, payload: payload, device: device, on: db) }
        } catch let refusal as Refusal {
            // A failed secure environment check is a failed proof like a bad signature: for a payment it counts toward the
            // lock, so that assertions cannot be tried without limit.
            throw Refusal(try await record(refusal.error, device: device.id, account: device.accountID, ceremony.refusals, on: db))
        }
        try await advanceCounter(of: device, to: proof.counter, ceremony.refusals, on: db)
        return VerifiedProof(device: device, payload: payload)
    }

    /// The proof of possession of a key presented for registration (`ceremony.account`'s, not bound yet): its challenge
    /// and signature, refusals recorded as the ceremony's. There is no counter to advance, and the App Attest attestation
    /// of a new key is the registration's own step.
    func verifyPresentedKey(
        _ proof: DeviceProof,
        key: DevicePublicKey,
        _ ceremony: ProofCeremony,
        on db: any SQLDatabase
    ) async throws
        -> SignedPayload
    {
        guard let account = ceremony.account, key.keyID == proof.keyID else { throw APIError.internalError }
        return try await checkSignedPayload(proof, by: key, device: nil, account: account, ceremony, early: nil, on: db)
    }

    /// The proof as most are, writing first: the issued challenge taken and the counter advanced in the statement that
    /// finds the device, then every check. Throws ``CheckBeforeWriting`` when anything fails, for the caller's
    /// ``writingFirst(_:)`` to drop it all and run ``verifyProof(_:_:early:on:)``, which refuses and records.
    func verifyProofWritingFirst(
        _ proof: DeviceProof,
        _ ceremony: ProofCeremony,
        early: EarlySignatureCheck?,
        on db: any SQLDatabase
    ) async throws
        -> VerifiedProof
    {
        guard case .issued(let challengeID, _, _) = ceremony.challenge, Validation.isIssuedID(challengeID) else { throw CheckBeforeWriting() }
        if let binds = ceremony.binds, binds.signed != binds.expected { throw CheckBeforeWriting() }
        let at = now.millisecondsSince1970
        guard let taken = try await db.challenges.take(challengeID, at: at),
            let device = try await devices(on: db).advanceCounter(keyID: proof.keyID, to: Int64(proof.counter), at: at),
            ceremony.account == nil || device.accountID == ceremony.account,
            ceremony.challengeBinding(account: device.accountID, device: device.id)?.matches(taken) == true,
            let challenge = taken.challenge,
            try checkSignature(
                proof.signature,
                by: device.publicKey,
                purpose: ceremony.purpose,
                challenge: challenge,
                counter: proof.counter,
                transactionHash: ceremony.transactionHash,
                early: early
            ) == nil
        else { throw CheckBeforeWriting() }
        signatureInputs.forget(challenge: challengeID)
        let payload = try signedPayload(
            ceremony.purpose,
            by: device.publicKey,
            challenge: challenge,
            counter: proof.counter,
            transactionHash: ceremony.transactionHash
        )
        if ceremony.checksAppAttest { try await verifyAssertion(proof.assertion, payload: payload, device: device, on: db) }
        return VerifiedProof(device: device, payload: payload)
    }

    /// The signature checked before the unit of work (``earlyCheck(_:keyID:challengeID:purpose:counter:transactionHash:)``)
    /// for a proof over an issued challenge; `transactionHash` is the one the device says it signed.
    func earlyCheck(
        _ proof: DeviceProof,
        purpose: SignedPayload.Purpose,
        challengeID: String,
        transactionHash: Data = Data()
    )
        -> EarlySignatureCheck?
    {
        earlyCheck(
            proof.signature,
            keyID: proof.keyID,
            challengeID: challengeID,
            purpose: purpose,
            counter: proof.counter,
            transactionHash: transactionHash
        )
    }

    /// The device of `keyID` when it is `account`'s (any account's when nil) and not revoked. A revoked one's attempt is
    /// recorded as the ceremony's (`refusals`); another account's key is not this account's to learn about, so it is
    /// refused as unknown and recorded nowhere.
    func usableDevice(keyID: Data, account: String?, refusals: ProofRefusals, on db: any SQLDatabase) async throws -> DeviceInfo {
        guard let device = try await devices(on: db).find(keyID: keyID) else {
            throw Refusal(APIError(.deviceNotFound, "No device is registered with this key."))
        }
        guard account == nil || device.accountID == account else {
            throw Refusal(APIError(.deviceNotFound, "No device of this account is registered with this key."))
        }
        guard device.revokedAt == nil else {
            throw Refusal(try await record(Self.deviceRevoked, device: device.id, account: device.accountID, refusals, on: db))
        }
        return device
    }

    /// The devices table, its keys parsed once per server (``SignatureInputs``), not on every request.
    func devices(on db: any SQLDatabase) -> DevicesTable { db.devices.parsingKeys(with: signatureInputs) }

    /// Records a refused proof as the ceremony's: audited as its kind, and counted against its payment (which locks after
    /// too many). Returns the error to report: the payment's lock does not change what the device is told.
    func record(_ error: APIError, device: String?, account: String, _ refusals: ProofRefusals, on db: any SQLDatabase) async throws -> APIError {
        try await recorder.audit(
            refusals.kind,
            succeeded: false,
            account: account,
            device: device,
            session: refusals.session,
            client: refusals.client,
            code: error.code.rawValue,
            payment: refusals.payment?.id,
            on: db
        )
        if let payment = refusals.payment { try await countFailedAttempt(payment, device: device, on: db) }
        return error
    }

    static let deviceRevoked = APIError(.deviceRevoked, "This device was revoked. Sign in with your password.")

    // MARK: The steps

    /// The checks a signed payload passes whoever holds the key: the challenge used up (or held by the ceremony's own
    /// record), what else the signature binds, and the signature itself.
    private func checkSignedPayload(
        _ proof: DeviceProof,
        by key: DevicePublicKey,
        device: String?,
        account: String,
        _ ceremony: ProofCeremony,
        early: EarlySignatureCheck?,
        on db: any SQLDatabase
    ) async throws -> SignedPayload {
        let challenge: Data
        switch ceremony.challenge {
        case .issued(let id, _, _):
            guard let binding = ceremony.challengeBinding(account: account, device: device) else { throw APIError.internalError }
            challenge = try await consumeChallenge(id, for: binding, on: db)
        case .held(let bytes):
            challenge = bytes
        }
        if let binds = ceremony.binds, binds.signed != binds.expected {
            throw Refusal(try await record(binds.mismatch, device: device, account: account, ceremony.refusals, on: db))
        }
        if let error = try checkSignature(
            proof.signature,
            by: key,
            purpose: ceremony.purpose,
            challenge: challenge,
            counter: proof.counter,
            transactionHash: ceremony.transactionHash,
            early: early
        ) {
            throw Refusal(try await record(error, device: device, account: account, ceremony.refusals, on: db))
        }
        return try signedPayload(ceremony.purpose, by: key, challenge: challenge, counter: proof.counter, transactionHash: ceremony.transactionHash)
    }

    /// Moves the device's counter forward, or refuses a counter that did not increase: audited as a possible copy of the
    /// key (`counter_regression`) and recorded as the ceremony's refusal.
    private func advanceCounter(of device: DeviceInfo, to counter: UInt64, _ refusals: ProofRefusals, on db: any SQLDatabase) async throws {
        if counter > UInt64(device.counter), try await db.devices.advanceCounter(device.id, to: Int64(counter), at: now.millisecondsSince1970) {
            return
        }
        // Nothing stored: the counter did not increase, or (below SERIALIZABLE) a request that committed after this one
        // read the device revoked it or stored a higher counter first.
        if counter > UInt64(device.counter), let current = try await db.devices.find(device.id, account: device.accountID),
            current.revokedAt != nil
        {
            throw Refusal(try await record(Self.deviceRevoked, device: device.id, account: device.accountID, refusals, on: db))
        }
        try await recorder.audit(
            .counterRegression,
            succeeded: false,
            account: device.accountID,
            device: device.id,
            code: "counter_not_increasing",
            on: db
        )
        let error = APIError(
            .counterNotIncreasing,
            "The signature counter did not increase (\(counter) after \(device.counter)); the key may have been copied."
        )
        throw Refusal(try await record(error, device: device.id, account: device.accountID, refusals, on: db))
    }

    /// Checks `signature` over the payload for `purpose` (with `transactionHash` for payments and approvals). When it
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
}
