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
}

/// What a client sends to register a device key, already decoded.
struct DeviceRegistration: Sendable {
    var challengeID: String
    var publicKey: DevicePublicKey
    var biometryKind: BiometryKind
    var name: String
    var counter: UInt64
    var signature: Data
    var appAttest: AppAttestSubmission?

    /// Decodes and checks every field; throws before anything is read or written.
    init(
        challengeID: String,
        publicKey: String,
        keyID: String,
        biometryKind: BiometryKind,
        name: String,
        counter: Int64,
        signature: String,
        appAttest: (keyID: String, attestation: String)? = nil
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
        self.counter = try Validation.counter(counter)
        self.signature = try Validation.bytes(signature, field: "signature")
        self.appAttest = try appAttest.map { try AppAttestSubmission(keyID: $0.keyID, attestation: $0.attestation) }
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
    /// register payload.
    func registerDevice(session: AuthenticatedSession, _ registration: DeviceRegistration) async throws -> DeviceInfo {
        try await commit { db in
            let binding = ChallengeBinding(purpose: .register, account: session.accountID, session: session.sessionID, device: nil)
            let challenge = try await consumeChallenge(registration.challengeID, for: binding, on: db)
            if let error = try checkSignature(
                registration.signature,
                by: registration.publicKey,
                purpose: .register,
                challenge: challenge,
                counter: registration.counter
            ) {
                try await recorder.audit(
                    .deviceRegistered,
                    succeeded: false,
                    account: session.accountID,
                    session: session.sessionID,
                    code: error.code.rawValue,
                    on: db
                )
                throw Refusal(error)
            }
            if try await db.devices.isRegistered(keyID: registration.publicKey.keyID) {
                try await recorder.audit(
                    .deviceRegistered,
                    succeeded: false,
                    account: session.accountID,
                    session: session.sessionID,
                    code: "key_already_registered",
                    on: db
                )
                throw Refusal(APIError(.keyAlreadyRegistered, "This key is registered already."))
            }
            let attested = try await verifyRegistrationAttestation(
                registration.appAttest,
                payload: try signedPayload(.register, by: registration.publicKey, challenge: challenge, counter: registration.counter),
                account: session.accountID,
                session: session.sessionID,
                on: db
            )
            let device = DeviceInfo(
                id: newID(),
                accountID: session.accountID,
                publicKey: registration.publicKey,
                biometryKind: registration.biometryKind,
                name: registration.name,
                installationID: session.installationID,
                counter: Int64(registration.counter),
                attestation: attested == nil ? "none" : "apple-appattest",
                createdAt: now
            )
            try await db.devices.insert(device)
            if let attested { try await storeAttestedKey(attested, device: device.id, on: db) }
            try await recorder.audit(
                .deviceRegistered,
                succeeded: true,
                account: session.accountID,
                device: device.id,
                session: session.sessionID,
                on: db
            )
            try await recorder.emit(.deviceRegistered, .init(device: device), on: db)
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
    /// Revoking a revoked device changes nothing.
    func revokeDevice(_ deviceID: String, session: AuthenticatedSession) async throws {
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
    /// The endpoint needs no session, so its limits are counted per client address (`client`, from
    /// ``ClientAddress``): per address, and per key from that address. A flood from one address is bounded and
    /// cannot use up what the key's owner, at another address, may ask for.
    func createSignInChallenge(keyID rawKeyID: String, client: String? = ClientAddress.current) async throws -> IssuedChallenge {
        let keyID = try Validation.bytes(rawKeyID, field: "keyId", length: 32)
        let client = client ?? "unknown"
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
            let device = try await usableDevice(keyID: keyID, on: db)
            return try await issueChallenge(
                ChallengeBinding(purpose: .login, account: device.accountID, session: nil, device: device.id),
                lifetime: configuration.loginChallengeLifetime,
                keyID: keyID,
                on: db
            )
        }
    }

    /// Biometric sign-in: the challenge, then the key's signature over the login payload, then a counter
    /// that must increase. Starts a session on the device's installation.
    func signInWithBiometrics(
        challengeID: String,
        keyID rawKeyID: String,
        counter rawCounter: Int64,
        signature rawSignature: String,
        appAttestAssertion: String? = nil
    ) async throws -> IssuedTokens {
        let keyID = try Validation.bytes(rawKeyID, field: "keyId", length: 32)
        let counter = try Validation.counter(rawCounter)
        let signature = try Validation.bytes(rawSignature, field: "signature")
        let assertion = try Validation.appAttestAssertion(appAttestAssertion)
        let early = earlyCheck(signature, keyID: keyID, challengeID: challengeID, purpose: .login, counter: counter)
        if let tokens = try await signInAdvancingFirst(
            challengeID: challengeID,
            keyID: keyID,
            counter: counter,
            signature: signature,
            assertion: assertion,
            early: early
        ) {
            return tokens
        }
        // Every check before its write, and every refusal recorded.
        // READ COMMITTED (TransactionIsolation): the challenge's use and the counter are conditional updates whose result
        // is checked; the counter's update locks the device's row (refusing a revoked device), then starting the session
        // locks the account's row, the order every unit that revokes a device or ends sessions takes them in.
        return try await commit(isolation: .readCommitted) { db in
            let device = try await usableDevice(keyID: keyID, on: db)
            let binding = ChallengeBinding(purpose: .login, account: device.accountID, session: nil, device: device.id)
            let challenge = try await consumeChallenge(challengeID, for: binding, on: db)
            if let error = try checkSignature(signature, by: device.publicKey, purpose: .login, challenge: challenge, counter: counter, early: early)
            {
                try await recorder.audit(
                    .biometricSignIn,
                    succeeded: false,
                    account: device.accountID,
                    device: device.id,
                    code: error.code.rawValue,
                    on: db
                )
                throw Refusal(error)
            }
            try await verifyAssertion(
                assertion,
                payload: try signedPayload(.login, by: device.publicKey, challenge: challenge, counter: counter),
                device: device,
                on: db
            )
            if let error = try await advanceCounter(of: device, to: counter, on: db) { throw Refusal(error) }
            return try await startBiometricSession(device: device, on: db)
        }
    }

    // MARK: Internals

    /// A biometric sign-in as most are, in one round trip fewer: the device's counter advances in the statement that finds
    /// the device, before the signature over it is checked (``writingFirst(_:)``). Nil when any check fails, with nothing of
    /// it kept.
    private func signInAdvancingFirst(
        challengeID: String,
        keyID: Data,
        counter: UInt64,
        signature: Data,
        assertion: Data?,
        early: EarlySignatureCheck?
    ) async throws -> IssuedTokens? {
        guard Validation.isIssuedID(challengeID) else { return nil }
        // The challenge's row taken before the device's, as below.
        return try await writingFirst { db in
            let at = now.millisecondsSince1970
            guard let taken = try await db.challenges.take(challengeID, at: at),
                let device = try await devices(on: db).advanceCounter(keyID: keyID, to: Int64(counter), at: at),
                ChallengeBinding(purpose: .login, account: device.accountID, session: nil, device: device.id).matches(taken),
                let challenge = taken.challenge,
                try checkSignature(signature, by: device.publicKey, purpose: .login, challenge: challenge, counter: counter, early: early) == nil
            else { throw CheckBeforeWriting() }
            signatureInputs.forget(challenge: challengeID)
            try await verifyAssertion(
                assertion,
                payload: try signedPayload(.login, by: device.publicKey, challenge: challenge, counter: counter),
                device: device,
                on: db
            )
            return try await startBiometricSession(device: device, on: db)
        }
    }

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

    /// The device of `keyID` when it exists and is not revoked; an attempt with a revoked key is audited.
    func usableDevice(keyID: Data, on db: any SQLDatabase) async throws -> DeviceInfo {
        guard let device = try await devices(on: db).find(keyID: keyID)
        else { throw Refusal(APIError(.deviceNotFound, "No device is registered with this key.")) }
        guard device.revokedAt == nil else {
            try await recorder.audit(.biometricSignIn, succeeded: false, account: device.accountID, device: device.id, code: "device_revoked", on: db)
            throw Refusal(APIError(.deviceRevoked, "This device was revoked. Sign in with your password."))
        }
        return device
    }

    /// The devices table, its keys parsed once per server (``SignatureInputs``), not on every request.
    func devices(on db: any SQLDatabase) -> DevicesTable { db.devices.parsingKeys(with: signatureInputs) }
}
