import BioAuthCore
import Foundation
import SQLKit

/// A registered passkey as the API and the console show it.
struct PasskeyInfo: Sendable {
    var id: String
    var accountID: String
    var credentialID: Data
    var publicKey: Data
    var algorithm: Int
    var signCount: Int64
    var aaguid: String
    var backupEligible: Bool
    var backedUp: Bool
    var attestationFormat: String
    var attestationType: String
    var attestationTrusted: Bool
    var transports: [String]
    var name: String
    var createdAt: Date
    var lastUsedAt: Date?
    var revokedAt: Date?
}

/// A credential descriptor for `excludeCredentials` and `allowCredentials`.
struct PasskeyDescriptor: Sendable {
    var id: Data
    var transports: [String]
}

/// What `navigator.credentials.create()` needs (PublicKeyCredentialCreationOptions), with the challenge's id.
struct PasskeyCreationOptions: Sendable {
    var challengeID: String
    var challenge: Data
    var relyingPartyID: String
    var relyingPartyName: String
    var userHandle: Data
    var username: String
    var algorithms: [Int]
    var exclude: [PasskeyDescriptor]
    var timeout: TimeInterval
    /// Ask for the authenticator's attestation (`direct`): the deployment accepts only attested passkeys. Otherwise `none`.
    var directAttestation: Bool
}

/// What `navigator.credentials.get()` needs (PublicKeyCredentialRequestOptions), with the challenge's id.
struct PasskeyRequestOptions: Sendable {
    var challengeID: String
    var challenge: Data
    var relyingPartyID: String
    var allow: [PasskeyDescriptor]
    var timeout: TimeInterval
}

/// A registration response (RegistrationResponseJSON), decoded.
struct PasskeyRegistrationSubmission: Sendable {
    var challengeID: String
    var credentialID: Data
    var clientDataJSON: Data
    var attestationObject: Data
    var transports: [String]
    var name: String
}

/// An authentication response (AuthenticationResponseJSON), decoded.
struct PasskeyAssertionSubmission: Sendable {
    var challengeID: String
    var credentialID: Data
    var clientDataJSON: Data
    var authenticatorData: Data
    var signature: Data
    var userHandle: Data?
    var installationID: String
}

extension BioAuthService {
    /// The transports WebAuthn defines; others a browser reports are dropped.
    static let passkeyTransports: Set<String> = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]

    private func requirePasskeys() throws {
        guard configuration.passkeys.enabled else {
            throw APIError(.passkeysDisabled, "This server has no passkey origins configured (--passkey-origins).")
        }
    }

    private func passkeyError(_ error: WebAuthnError) -> APIError { APIError(error.problem, error.reason) }

    // MARK: Registration

    /// Options to create a passkey for the signed-in account: a single-use challenge bound to this session, the
    /// account's user handle (made now if it has none), and its passkeys to exclude.
    func passkeyRegistrationOptions(session: AuthenticatedSession) async throws -> PasskeyCreationOptions {
        try requirePasskeys()
        try await requireAssurance(.addPasskey, session: session)
        let policy = configuration.passkeys
        return try await commit { db in
            let handle = try await userHandle(account: session.accountID, on: db)
            let exclude = try await livePasskeyDescriptors(account: session.accountID, on: db)
            let (id, challenge) = try await issuePasskeyChallenge(ceremony: "create", account: session.accountID, session: session.sessionID, on: db)
            return PasskeyCreationOptions(
                challengeID: id,
                challenge: challenge,
                relyingPartyID: policy.resolvedRelyingPartyID,
                relyingPartyName: policy.relyingPartyName,
                userHandle: handle,
                username: session.username,
                algorithms: policy.relyingParty.algorithms.map(\.rawValue),
                exclude: exclude,
                timeout: policy.ceremonyLifetime,
                directAttestation: policy.requireTrustedAttestation
            )
        }
    }

    /// Registers a passkey from the browser's response, for the session its challenge was issued to (§7.1).
    func registerPasskey(_ submission: PasskeyRegistrationSubmission, session: AuthenticatedSession) async throws -> PasskeyInfo {
        try requirePasskeys()
        try await requireAssurance(.addPasskey, session: session)
        let name = try Validation.displayName(submission.name, field: "name", code: .malformedRequest)
        let challenge = try await commit { db in
            try await consumePasskeyChallenge(
                submission.challengeID,
                ceremony: "create",
                account: session.accountID,
                session: session.sessionID,
                on: db
            )
        }
        let verified: VerifiedRegistration
        do {
            verified = try await configuration.passkeys.relyingParty.verifyRegistration(
                clientDataJSON: submission.clientDataJSON,
                attestationObject: submission.attestationObject,
                challenge: challenge,
                at: now
            )
            guard verified.credentialID == submission.credentialID else {
                throw WebAuthnError.malformed("rawId is not the credential id in the authenticator data")
            }
        } catch let error as WebAuthnError {
            try await commit { db -> Void in
                try await recorder.audit(
                    .passkeyRegistered,
                    succeeded: false,
                    account: session.accountID,
                    session: session.sessionID,
                    code: error.code,
                    on: db
                )
            }
            throw passkeyError(error)
        }
        let info = PasskeyInfo(
            id: newID(),
            accountID: session.accountID,
            credentialID: verified.credentialID,
            publicKey: verified.publicKey,
            algorithm: verified.algorithm.rawValue,
            signCount: Int64(verified.signCount),
            aaguid: verified.aaguid.uuidString.lowercased(),
            backupEligible: verified.backupEligible,
            backedUp: verified.backedUp,
            attestationFormat: verified.attestation.format,
            attestationType: verified.attestation.type.rawValue,
            attestationTrusted: verified.attestationTrusted,
            transports: submission.transports.filter(Self.passkeyTransports.contains).sorted(),
            name: name,
            createdAt: now
        )
        return try await commit { db in
            guard try await !db.passkeys.isRegistered(credentialID: info.credentialID) else {
                try await recorder.audit(
                    .passkeyRegistered,
                    succeeded: false,
                    account: session.accountID,
                    session: session.sessionID,
                    code: "passkey_already_registered",
                    on: db
                )
                throw Refusal(APIError(.passkeyAlreadyRegistered, "This passkey is registered already."))
            }
            try await db.passkeys.insert(info, userVerified: verified.userVerified)
            // Its user verification just now counts as a step-up at the passkey's level, as a device's registration does.
            _ = try await db.sessions.recordStepUp(
                session.sessionID,
                at: now.millisecondsSince1970,
                level: (verified.backupEligible ? AssuranceLevel.syncedPasskey : .deviceKey).rawValue,
                device: nil,
                action: StepUpAction.any.rawValue
            )
            try await recorder.audit(
                .passkeyRegistered,
                succeeded: true,
                account: session.accountID,
                session: session.sessionID,
                passkey: info.id,
                on: db
            )
            try await recorder.emit(.passkeyRegistered, .init(passkey: info), on: db)
            return info
        }
    }

    // MARK: Listing and revoking

    /// The account's passkeys, newest first, revoked ones included (with their revocation time).
    func passkeys(account: String) async throws -> [PasskeyInfo] {
        try await database.transaction { db in
            try await db.passkeys.list(account: account)
        }
    }

    /// Revokes one of the account's passkeys: it signs in no more, and the sessions it started end now, except the
    /// session asking. Revoking a revoked passkey changes nothing. Revoking one other than the session's own is sensitive
    /// (``SensitiveOperation/revokePasskey``).
    func revokePasskey(_ passkeyID: String, session: AuthenticatedSession) async throws {
        if passkeyID != session.passkeyID { try await requireAssurance(.revokePasskey, session: session) }
        try await commit { db -> Void in
            guard Validation.isIssuedID(passkeyID),
                let found = try await db.passkeys.find(passkeyID, account: session.accountID)
            else { throw Refusal(APIError(.passkeyNotFound, "There is no such passkey on this account.")) }
            guard found.revokedAt == nil else { return }
            try await recorder.revoke(found, keeping: session.sessionID, on: db)
        }
    }

    // MARK: Sign-in

    /// Options to sign in with a passkey: a single-use challenge for this attempt. Without a username the browser
    /// offers the discoverable passkeys it holds for the relying party (no username typed); with one, the
    /// challenge is bound to that account and lists its passkeys.
    ///
    /// Counted per client address like the biometric challenge. An unknown username gets a challenge bound to no
    /// account and an empty list, exactly like the discoverable case, so the answer does not say whether the
    /// username exists.
    func passkeySignInOptions(username rawUsername: String?) async throws -> PasskeyRequestOptions {
        try requirePasskeys()
        let username = try rawUsername.map(Validation.username)
        let policy = configuration.passkeys
        try await rateLimitShared(
            "passkey-options-client:" + (caller.address ?? "unknown"),
            name: .passkeyClient,
            limit: configuration.signInChallengesPerClient,
            window: configuration.rateLimitWindow
        )
        return try await commit { db in
            var account: String? = nil
            var allow: [PasskeyDescriptor] = []
            if let username, let id = try await db.accounts.id(username: username) {
                allow = try await livePasskeyDescriptors(account: id, on: db)
                if !allow.isEmpty { account = id }
            }
            let (id, challenge) = try await issuePasskeyChallenge(ceremony: "get", account: account, session: nil, on: db)
            return PasskeyRequestOptions(
                challengeID: id,
                challenge: challenge,
                relyingPartyID: policy.resolvedRelyingPartyID,
                allow: allow,
                timeout: policy.ceremonyLifetime
            )
        }
    }

    /// Passkey sign-in (§7.2): the challenge, the credential (registered, not revoked, of the account the challenge
    /// was bound to, with the user handle of its account), its signature, then a counter that must grow unless it
    /// is 0. Starts a session on `installationID`.
    func signInWithPasskey(_ submission: PasskeyAssertionSubmission) async throws -> IssuedTokens {
        try requirePasskeys()
        let installationID = try Validation.installationID(submission.installationID)
        // 1. Use up the challenge, and read the credential and its account.
        let (challenge, found, handle, discoverable) = try await commit { db -> (Data, PasskeyInfo, Data?, Bool) in
            let (challenge, boundAccount) = try await consumePasskeyChallenge(submission.challengeID, ceremony: "get", on: db)
            let found = try await db.passkeys.find(credentialID: submission.credentialID)
            guard let found, found.revokedAt == nil, boundAccount == nil || boundAccount == found.accountID else {
                try await recorder.audit(
                    .passkeySignIn,
                    succeeded: false,
                    account: found?.accountID,
                    code: "passkey_unknown_credential",
                    passkey: found?.id,
                    on: db
                )
                throw Refusal(APIError(.passkeyUnknownCredential, "This passkey is not registered here, or was revoked."))
            }
            let handle = try await db.accounts.userHandle(found.accountID)
            return (challenge, found, handle, boundAccount == nil)
        }
        // 2. Verify outside any transaction. §7.2 step 6: when the user was not identified before the ceremony (a
        // discoverable sign-in), the userHandle must be present; when present, it must be the credential's account's.
        let assertion: VerifiedAssertion
        do {
            if submission.userHandle == nil && discoverable {
                throw WebAuthnError(.passkeyUserHandleMismatch, "a sign-in without a username must carry the credential's userHandle")
            }
            if let userHandle = submission.userHandle, userHandle != handle {
                throw WebAuthnError(.passkeyUserHandleMismatch, "userHandle is not the handle of the credential's account")
            }
            assertion = try configuration.passkeys.relyingParty.verifyAuthentication(
                clientDataJSON: submission.clientDataJSON,
                authenticatorData: submission.authenticatorData,
                signature: submission.signature,
                challenge: challenge,
                stored: StoredPasskeyCredential(
                    publicKey: found.publicKey,
                    signCount: UInt32(clamping: found.signCount),
                    backupEligible: found.backupEligible
                )
            )
        } catch let error as WebAuthnError {
            try await commit { db -> Void in
                try await recorder.audit(.passkeySignIn, succeeded: false, account: found.accountID, code: error.code, passkey: found.id, on: db)
            }
            throw passkeyError(error)
        }
        // 3. Store the counter only if nobody used the credential meanwhile, and start the session.
        return try await commit { db in
            if let lockedUntil = try await db.accounts.lockedUntil(found.accountID), lockedUntil > now {
                try await recorder.audit(
                    .passkeySignIn,
                    succeeded: false,
                    account: found.accountID,
                    code: "account_locked",
                    passkey: found.id,
                    on: db
                )
                throw Refusal(lockedError(until: lockedUntil))
            }
            let updated = try await db.passkeys.recordSignIn(
                found.id,
                previous: found.signCount,
                signCount: Int64(assertion.signCount),
                backedUp: assertion.backedUp,
                at: now.millisecondsSince1970
            )
            guard updated else {
                try await recorder.audit(
                    .passkeySignIn,
                    succeeded: false,
                    account: found.accountID,
                    code: "passkey_counter_replayed",
                    passkey: found.id,
                    on: db
                )
                throw Refusal(APIError(.passkeyCounterReplayed, "The passkey was used at the same moment elsewhere; sign in again."))
            }
            let tokens = try await startSession(
                account: found.accountID,
                installationID: installationID,
                method: .passkey,
                device: nil,
                passkey: found.id,
                on: db
            )
            try await recorder.audit(.passkeySignIn, succeeded: true, account: found.accountID, session: tokens.sessionID, passkey: found.id, on: db)
            return tokens
        }
    }

    // MARK: Internals

    /// The account's passkeys that are not revoked, as the browser names them (`excludeCredentials`, `allowCredentials`).
    private func livePasskeyDescriptors(account: String, on db: any SQLDatabase) async throws -> [PasskeyDescriptor] {
        try await db.passkeys.list(account: account, liveOnly: true).map { PasskeyDescriptor(id: $0.credentialID, transports: $0.transports) }
    }

    /// The account's user handle: 32 random bytes made the first time it is needed.
    private func userHandle(account: String, on db: any SQLDatabase) async throws -> Data {
        if let handle = try await db.accounts.userHandle(account) { return handle }
        let handle = random.bytes(32)
        try await db.accounts.setUserHandleIfNone(account, handle: handle)
        return handle
    }

    private func issuePasskeyChallenge(ceremony: String, account: String?, session: String?, on db: any SQLDatabase) async throws -> (String, Data) {
        let id = newID()
        let challenge = random.bytes(32)
        try await db.challenges.insertPasskey(
            id: id,
            ceremony: ceremony,
            challenge: challenge,
            account: account,
            session: session,
            at: now.millisecondsSince1970,
            expiresAt: now.addingTimeInterval(configuration.passkeys.ceremonyLifetime).millisecondsSince1970
        )
        return (id, challenge)
    }

    /// Uses up a registration challenge issued to `session`.
    private func consumePasskeyChallenge(
        _ id: String,
        ceremony: String,
        account: String,
        session: String,
        on db: any SQLDatabase
    ) async throws -> Data {
        let (challenge, bound) = try await consumePasskeyChallenge(id, ceremony: ceremony, session: session, on: db)
        guard bound == account else { throw Refusal(APIError(.challengeMismatch, "The challenge was issued to another session.")) }
        return challenge
    }

    /// Uses up the challenge `id` of `ceremony` (and of `session`, when given); returns its bytes and the account it
    /// was bound to. A used one is a replay and is audited.
    private func consumePasskeyChallenge(
        _ id: String,
        ceremony: String,
        session: String? = nil,
        on db: any SQLDatabase
    ) async throws -> (Data, String?) {
        guard Validation.isIssuedID(id), let stored = try await db.challenges.findPasskey(id) else {
            throw Refusal(APIError(.challengeNotFound, "There is no such challenge."))
        }
        let account = stored.accountID
        guard stored.ceremony == ceremony, session == nil || stored.sessionID == session
        else { throw Refusal(APIError(.challengeMismatch, "The challenge was issued for another ceremony or session.")) }
        try await requireUnused(stored.use, account: account, on: db)
        guard try await db.challenges.markPasskeyConsumed(id, at: now.millisecondsSince1970), let bytes = stored.challenge else {
            throw Refusal(APIError(.challengeUsed, "The challenge was already used."))
        }
        return (bytes, account)
    }
}
