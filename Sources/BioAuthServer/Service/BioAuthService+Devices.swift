import BioAuthCore
import Foundation
import SQLKit

/// A bound device as the API shows it.
struct DeviceInfo: Sendable {
    var id: String
    var accountID: String
    var publicKey: DevicePublicKey
    var biometryKind: BiometryKind
    var name: String
    var installationID: String
    var counter: Int64
    var attestation: String
    var createdAt: Date
    var lastUsedAt: Date?
    var revokedAt: Date?
    /// The evidence beyond the session's password that bound it (docs/PROTOCOL.md, "Binding a device").
    var boundBy: Binding = .password
    /// Until when it is in its cooling-off (bound by a password alone): no sign-ins elsewhere approved with it, and
    /// payments up to the cooling-off's daily limit. Nil when it has none.
    var coolingOffUntil: Date?

    /// How a device came to be bound.
    enum Binding: String, Sendable, CaseIterable {
        /// The first device of an account, by the session's password alone (where the deployment allows it).
        case password
        /// Approved on a device of the account that was bound already.
        case approval
        /// With a binding code the bank's backend asked for and handed to the customer.
        case bindingCode = "binding_code"
        /// With one of the customer's own recovery codes (a lost phone's way back): every other device was revoked.
        case recoveryCode = "recovery_code"
    }

    /// Whether its key was registered with an App Attest attestation (an attested key of the app's is stored beside it).
    var isAttested: Bool { attestation != "none" }

    /// Whether it is in its cooling-off at `now`.
    func isCoolingOff(at now: Date) -> Bool { coolingOffUntil.map { $0 > now } ?? false }
}

/// What a client sends to register a device key, already decoded.
struct DeviceRegistration: Sendable {
    var challengeID: String
    var publicKey: DevicePublicKey
    var biometryKind: BiometryKind
    var name: String
    /// The new key's proof of possession: its signature over the register payload.
    var proof: DeviceProof
    var appAttest: AppAttestSubmission?
    /// What binds the key beyond the session: nothing, an approval on a bound device, or a binding code.
    var evidence: BindingEvidence

    /// Decodes and checks every field; throws before anything is read or written.
    init(
        challengeID: String,
        publicKey: String,
        keyID: String,
        biometryKind: BiometryKind,
        name: String,
        counter: Int64,
        signature: String,
        appAttest: (keyID: String, attestation: String)? = nil,
        approvalID: String? = nil,
        bindingCode: String? = nil,
        recoveryCode: String? = nil
    ) throws {
        let keyBytes = try Validation.bytes(publicKey, field: "publicKey")
        do {
            self.publicKey = try DevicePublicKey(x963Representation: keyBytes)
        } catch {
            throw APIError(.invalidPublicKey, "publicKey must be an uncompressed P-256 point: \(error.description).")
        }
        guard try Validation.bytes(keyID, field: "keyId", length: 32) == self.publicKey.keyID else {
            throw APIError(.keyIDMismatch, "keyId must be SHA-256 of the public key.")
        }
        self.challengeID = challengeID
        self.biometryKind = biometryKind
        self.name = try Validation.deviceName(name)
        self.proof = DeviceProof(
            keyID: self.publicKey.keyID,
            counter: try Validation.counter(counter),
            signature: try Validation.bytes(signature, field: "signature")
        )
        self.appAttest = try appAttest.map { try AppAttestSubmission(keyID: $0.keyID, attestation: $0.attestation) }
        self.evidence = try BindingEvidence(approvalID: approvalID, bindingCode: bindingCode, recoveryCode: recoveryCode)
    }
}

extension BioAuthService {
    /// A registration challenge for the signed-in account and this session.
    func createRegistrationChallenge(session: AuthenticatedSession) async throws -> IssuedChallenge {
        try await database.transaction { db in
            try await issueChallenge(
                ChallengeBinding(purpose: .register, account: session.accountID, session: session.sessionID, device: nil),
                lifetime: configuration.registrationChallengeLifetime,
                keyID: nil,
                on: db
            )
        }
    }

    /// Binds a device key to the account after checking the challenge and the key's signature over the
    /// register payload, and the evidence the binding policy asks for (``decideBinding(_:keyID:device:session:refusals:on:)``).
    /// The new key's proof counts as a step-up of the session (docs/PROTOCOL.md, "Step-up").
    func registerDevice(session: AuthenticatedSession, _ registration: DeviceRegistration) async throws -> DeviceInfo {
        try await commit { db in
            let refusals = ProofRefusals(kind: .deviceRegistered, session: session.sessionID)
            let ceremony = ProofCeremony(
                purpose: .register,
                account: session.accountID,
                challenge: .issued(id: registration.challengeID, session: session.sessionID),
                refusals: refusals
            )
            let payload = try await verifyPresentedKey(registration.proof, key: registration.publicKey, ceremony, on: db)
            if try await db.devices.isRegistered(keyID: registration.publicKey.keyID) {
                throw Refusal(
                    try await record(
                        APIError(.keyAlreadyRegistered, "This key is registered already."),
                        device: nil,
                        account: session.accountID,
                        refusals,
                        on: db
                    )
                )
            }
            let attested = try await verifyRegistrationAttestation(
                registration.appAttest,
                payload: payload,
                account: session.accountID,
                session: session.sessionID,
                on: db
            )
            let id = newID()
            let decision = try await decideBinding(
                registration.evidence,
                keyID: registration.publicKey.keyID,
                device: id,
                session: session,
                refusals: refusals,
                on: db
            )
            let device = DeviceInfo(
                id: id,
                accountID: session.accountID,
                publicKey: registration.publicKey,
                biometryKind: registration.biometryKind,
                name: registration.name,
                installationID: session.installationID,
                counter: Int64(registration.proof.counter),
                attestation: attested == nil ? "none" : "apple-appattest",
                createdAt: now,
                boundBy: decision.binding,
                coolingOffUntil: decision.coolingOffUntil
            )
            try await db.devices.insert(device)
            if let attested { try await storeAttestedKey(attested, device: device.id, on: db) }
            // The new key just signed in this session, behind a biometric: a step-up with it, as one made a moment later
            // would be (whoever bound the key could make that one too). "Turn on Face ID", then "set the PIN", asks once.
            _ = try await db.sessions.recordStepUp(
                session.sessionID,
                at: now.millisecondsSince1970,
                level: AssuranceLevel.deviceKey(attested: device.isAttested, appAttest: configuration.appAttest.mode).rawValue,
                device: device.id,
                action: StepUpAction.any.rawValue
            )
            try await recorder.audit(
                .deviceRegistered,
                succeeded: true,
                account: session.accountID,
                device: device.id,
                session: session.sessionID,
                on: db
            )
            try await recorder.emit(.deviceRegistered, .init(device: device), on: db)
            if decision.recovers { try await recover(session.accountID, device: device, session: session, on: db) }
            return device
        }
    }

    /// The account's devices, newest first.
    func devices(of session: AuthenticatedSession) async throws -> [DeviceInfo] {
        try await database.transaction { db in
            try await devices(on: db).list(account: session.accountID)
        }
    }

    /// Revokes one of the account's devices: its sessions end now, except the session asking (turning
    /// biometric sign-in off on the phone in hand must not sign it out), and its key is refused from now on.
    /// Revoking a revoked device changes nothing. Revoking one other than the session's own is sensitive
    /// (``SensitiveOperation/revokeDevice``): a phished password cannot clear the way to binding a phone by password.
    func revokeDevice(_ deviceID: String, session: AuthenticatedSession) async throws {
        if deviceID != session.deviceID { try await requireAssurance(.revokeDevice, session: session) }
        try await commit { db -> Void in
            guard Validation.isIssuedID(deviceID),
                let device = try await devices(on: db).find(deviceID, account: session.accountID)
            else { throw Refusal(APIError(.deviceNotFound, "There is no such device on this account.")) }
            guard device.revokedAt == nil else { return }
            try await recorder.revoke(device, keeping: session.sessionID, on: db)
        }
    }

    /// A sign-in challenge for a registered, unrevoked key.
    ///
    /// The endpoint needs no session, so its limits are counted per client address (the ``caller``'s): per address, and
    /// per key from that address. A flood from one address is bounded and cannot use up what the key's owner, at
    /// another address, may ask for.
    func createSignInChallenge(keyID rawKeyID: String) async throws -> IssuedChallenge {
        let keyID = try Validation.bytes(rawKeyID, field: "keyId", length: 32)
        let client = caller.address ?? "unknown"
        // Each statement on its own (TransactionIsolation.eachStatement), so the address's shared row is held no longer than
        // its own statement: the hits (the address's, then, while it is within its limit, the key's from that address), a
        // read, then writes that each stand alone (the audit of a revoked key, or the challenge).
        return try await commit(isolation: .eachStatement) { db in
            try await rateLimit(
                shared: "signin-challenge-client:" + client,
                name: .signinClient,
                limit: configuration.signInChallengesPerClient,
                then: "signin-challenge:" + Base64URL.encode(keyID) + "@" + client,
                name: .signinKey,
                limit: configuration.signInChallengesPerWindow,
                window: configuration.rateLimitWindow,
                on: db
            )
            let device = try await usableDevice(keyID: keyID, account: nil, refusals: ProofRefusals(kind: .biometricSignIn), on: db)
            return try await issueChallenge(
                ChallengeBinding(purpose: .login, account: device.accountID, session: nil, device: device.id),
                lifetime: configuration.loginChallengeLifetime,
                keyID: keyID,
                on: db
            )
        }
    }

    /// Biometric sign-in: the key's proof over a login challenge (``verifyProof(_:_:early:on:)``). Starts a session on the
    /// device's installation.
    func signInWithBiometrics(
        challengeID: String,
        keyID: String,
        counter: Int64,
        signature: String,
        appAttestAssertion: String? = nil
    ) async throws -> IssuedTokens {
        let proof = try DeviceProof(keyID: keyID, counter: counter, signature: signature, appAttestAssertion: appAttestAssertion)
        let ceremony = ProofCeremony(
            purpose: .login,
            account: nil,
            challenge: .issued(id: challengeID),
            refusals: ProofRefusals(kind: .biometricSignIn)
        )
        let early = earlyCheck(proof, purpose: .login, challengeID: challengeID)
        // As most are, in one round trip fewer: the counter advances in the statement that finds the device; nothing of it
        // is kept when a check fails.
        if Validation.isIssuedID(challengeID),
            let tokens = try await writingFirst({ db in
                try await startBiometricSession(device: try await verifyProofWritingFirst(proof, ceremony, early: early, on: db).device, on: db)
            })
        {
            return tokens
        }
        // Every check before its write, and every refusal recorded.
        // READ COMMITTED (TransactionIsolation): the challenge's use and the counter are conditional updates whose result
        // is checked; the counter's update locks the device's row (refusing a revoked device), then starting the session
        // locks the account's row, the order every unit that revokes a device or ends sessions takes them in.
        return try await commit(isolation: .readCommitted) { db in
            try await startBiometricSession(device: try await verifyProof(proof, ceremony, early: early, on: db).device, on: db)
        }
    }

    // MARK: Internals

    /// The session of a biometric sign-in that passed every check, audited.
    private func startBiometricSession(device: DeviceInfo, on db: any SQLDatabase) async throws -> IssuedTokens {
        let tokens = try await startSession(
            account: device.accountID,
            installationID: device.installationID,
            method: .biometric,
            device: device.id,
            on: db
        )
        try await recorder.audit(
            .biometricSignIn,
            succeeded: true,
            account: device.accountID,
            device: device.id,
            session: tokens.sessionID,
            on: db
        )
        return tokens
    }
}
