import BioAuthCore
import Foundation
import SQLKit

/// An attestation sent with a device registration, already decoded.
struct AppAttestSubmission: Sendable {
    /// The App Attest key id (32 bytes).
    var keyID: Data
    /// The attestation object (CBOR).
    var attestation: Data

    init(keyID: String, attestation: String) throws {
        self.keyID = try Validation.bytes(keyID, field: "appAttest.keyId", length: 32)
        // A real attestation is 5-6 KiB (about 7,500 characters of base64url); the verifier reads up to its own bound.
        self.attestation = try Validation.bytes(attestation, field: "appAttest.attestation", maxLength: AppAttestVerifier.maxObjectSize)
    }
}

/// The secure environment check. The client-data hash of every attestation and assertion is SHA-256 of the
/// signed payload the device key signs in the same request, so the App Attest proof is bound to the same
/// challenge, purpose, key, counter and (for payments) transaction.
extension BioAuthService {
    /// Verifies the attestation sent with a registration under the deployment's policy.
    ///
    /// - Returns: the attested key to store, or `nil` (policy off, or `report` with a failure, which is audited).
    /// - Throws: a ``Refusal`` with the step's code under `require`, after auditing it.
    func verifyRegistrationAttestation(
        _ submission: AppAttestSubmission?,
        payload: SignedPayload,
        account: String,
        session: String,
        on db: any SQLDatabase
    ) async throws -> AttestedAppKey? {
        let policy = configuration.appAttest
        guard policy.mode != .off else { return nil }
        do {
            guard let submission else { throw AppAttestError.missing }
            let key = try await policy.verifier.verifyAttestation(
                submission.attestation,
                keyID: submission.keyID,
                clientDataHash: payload.appAttestClientDataHash,
                at: now
            )
            if try await db.appAttestKeys.isRegistered(keyID: key.keyID) { throw AppAttestError.keyReused }
            try await recorder.audit(.appAttestation, succeeded: true, account: account, session: session, on: db)
            return key
        } catch let error as AppAttestError {
            try await recorder.audit(.appAttestation, succeeded: false, account: account, session: session, code: error.code, on: db)
            if policy.mode == .require { throw Refusal(APIError(error.problem, Self.message(error))) }
            return nil
        }
    }

    /// Stores the attested key of a newly registered device.
    func storeAttestedKey(_ key: AttestedAppKey, device: String, on db: any SQLDatabase) async throws {
        try await db.appAttestKeys.insert(key, device: device, at: now.millisecondsSince1970)
    }

    /// Verifies the assertion sent with a biometric sign-in or payment under the deployment's policy, and moves
    /// the attested key's counter forward only if it is still below the new one (two concurrent requests
    /// with one assertion cannot both pass).
    ///
    /// - Throws: a ``Refusal`` with the step's code under `require`, after auditing it; under `report` the
    ///   failure is audited and the request goes on.
    func verifyAssertion(_ assertion: Data?, payload: SignedPayload, device: DeviceInfo, on db: any SQLDatabase) async throws {
        let policy = configuration.appAttest
        guard policy.mode != .off else { return }
        do {
            guard let assertion else { throw AppAttestError.missing }
            guard let stored = try await db.appAttestKeys.find(device: device.id) else { throw AppAttestError.missing }
            guard let keyBytes = stored.publicKey, let key = try? DevicePublicKey(x963Representation: keyBytes) else { throw APIError.internalError }
            let counter = try policy.verifier.verifyAssertion(
                assertion,
                clientData: payload.bytes,
                key: key,
                appID: stored.appID,
                previousCounter: UInt32(clamping: stored.counter)
            )
            guard try await db.appAttestKeys.advanceCounter(device: device.id, to: Int64(counter)) else { throw AppAttestError.counterReplayed }
            try await recorder.audit(.appAssertion, succeeded: true, account: device.accountID, device: device.id, on: db)
        } catch let error as AppAttestError {
            try await recorder.audit(.appAssertion, succeeded: false, account: device.accountID, device: device.id, code: error.code, on: db)
            if policy.mode == .require { throw Refusal(APIError(error.problem, Self.message(error))) }
        }
    }

    private static func message(_ error: AppAttestError) -> String {
        error == .missing
            ? "This service requires the app's secure environment check (App Attest); update the app or register this device again."
            : "The app's secure environment check failed (\(error.reason))."
    }
}
