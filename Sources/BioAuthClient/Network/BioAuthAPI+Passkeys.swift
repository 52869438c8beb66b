import BioAuthCore
import Foundation

/// Options to create a passkey, as the server issued them, ready for a ``PasskeyProvider``.
public struct PasskeyCreationChallenge: Sendable, Equatable {
    /// The challenge's id, sent back with the new passkey.
    public var id: String
    /// What the provider is asked to create.
    public var request: PasskeyRegistrationRequest
}

/// Options to sign in with a passkey, as the server issued them, ready for a ``PasskeyProvider``.
public struct PasskeySignInChallenge: Sendable, Equatable {
    /// The challenge's id, sent back with the assertion.
    public var id: String
    /// What the provider is asked to sign.
    public var request: PasskeyAssertionRequest
}

/// A passkey registered on the account.
public struct RegisteredPasskey: Sendable, Equatable {
    /// The server's id for it (what ``BioAuthAPI/revokePasskey(_:accessToken:)`` takes).
    public var id: String
    /// The name the user gave it.
    public var name: String
    /// The WebAuthn credential id.
    public var credentialID: Data
    /// A multi-device (synced) passkey.
    public var backupEligible: Bool
    /// When it was registered.
    public var createdAt: Date
    /// When it last signed in.
    public var lastUsedAt: Date?
    /// When it was revoked; a revoked passkey signs in nowhere.
    public var revokedAt: Date?
}

extension BioAuthAPI {
    // MARK: Passkeys

    /// Options to create a passkey for the signed-in account.
    public func passkeyCreationChallenge(accessToken: String) async throws -> PasskeyCreationChallenge {
        try await authorized(accessToken) {
            switch try await client.createPasskeyRegistrationOptions(.init()) {
            case .created(let created):
                let options = try created.body.json
                let key = options.publicKey
                guard let challenge = Base64URL.decode(key.challenge), let user = Base64URL.decode(key.user.id) else {
                    throw APIProblem(.unexpectedResponse, detail: "the passkey options are not base64url")
                }
                return PasskeyCreationChallenge(
                    id: options.challengeId,
                    request: PasskeyRegistrationRequest(
                        relyingPartyID: key.rp.id,
                        challenge: challenge,
                        userID: user,
                        userName: key.user.name,
                        excludedCredentialIDs: key.excludeCredentials.compactMap { Base64URL.decode($0.id) }
                    )
                )
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Registers the passkey `registration` made for `challengeID`.
    public func registerPasskey(
        challengeID: String,
        _ registration: PasskeyRegistration,
        name: String,
        accessToken: String
    ) async throws
        -> RegisteredPasskey
    {
        try await authorized(accessToken) {
            let id = Base64URL.encode(registration.credentialID)
            let body = Components.Schemas.PasskeyRegistrationRequest(
                challengeId: challengeID,
                name: name,
                credential: .init(
                    id: id,
                    rawId: id,
                    _type: .publicKey,
                    response: .init(
                        clientDataJSON: Base64URL.encode(registration.clientDataJSON),
                        attestationObject: Base64URL.encode(registration.attestationObject),
                        transports: registration.transports
                    )
                )
            )
            switch try await client.registerPasskey(.init(body: .json(body))) {
            case .created(let created): return try Self.passkey(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// The account's passkeys, revoked ones included.
    public func passkeys(accessToken: String) async throws -> [RegisteredPasskey] {
        try await authorized(accessToken) {
            switch try await client.listPasskeys(.init()) {
            case .ok(let ok): return try ok.body.json.passkeys.map(Self.passkey)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Revokes a passkey of the account.
    public func revokePasskey(_ passkeyID: String, accessToken: String) async throws {
        try await authorized(accessToken) {
            switch try await client.revokePasskey(.init(path: .init(passkeyId: passkeyID))) {
            case .noContent: return
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Options to sign in with a passkey: discoverable without `username`, the account's passkeys with it.
    public func passkeySignInChallenge(username: String? = nil) async throws -> PasskeySignInChallenge {
        try await call {
            switch try await client.createPasskeySignInOptions(.init(body: .json(.init(username: username)))) {
            case .created(let created):
                let options = try created.body.json
                guard let challenge = Base64URL.decode(options.publicKey.challenge) else {
                    throw APIProblem(.unexpectedResponse, detail: "the passkey challenge is not base64url")
                }
                return PasskeySignInChallenge(
                    id: options.challengeId,
                    request: PasskeyAssertionRequest(
                        relyingPartyID: options.publicKey.rpId,
                        challenge: challenge,
                        allowedCredentialIDs: options.publicKey.allowCredentials.compactMap { Base64URL.decode($0.id) }
                    )
                )
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Passkey sign-in with `assertion`, made for `challengeID`, on this installation.
    public func signInWithPasskey(challengeID: String, _ assertion: PasskeyAssertion, installationID: String) async throws -> SessionTokens {
        try await call {
            let id = Base64URL.encode(assertion.credentialID)
            let body = Components.Schemas.PasskeySignInRequest(
                challengeId: challengeID,
                installationId: installationID,
                credential: .init(
                    id: id,
                    rawId: id,
                    _type: .publicKey,
                    response: .init(
                        clientDataJSON: Base64URL.encode(assertion.clientDataJSON),
                        authenticatorData: Base64URL.encode(assertion.authenticatorData),
                        signature: Base64URL.encode(assertion.signature),
                        userHandle: assertion.userHandle.map(Base64URL.encode)
                    )
                )
            )
            switch try await client.signInWithPasskey(.init(body: .json(body))) {
            case .created(let created): return Self.tokens(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    private static func passkey(_ passkey: Components.Schemas.Passkey) throws -> RegisteredPasskey {
        guard let credentialID = Base64URL.decode(passkey.credentialId) else {
            throw APIProblem(.unexpectedResponse, detail: "the passkey record is malformed")
        }
        return RegisteredPasskey(
            id: passkey.passkeyId,
            name: passkey.name,
            credentialID: credentialID,
            backupEligible: passkey.backupEligible,
            createdAt: passkey.createdAt,
            lastUsedAt: passkey.lastUsedAt,
            revokedAt: passkey.revokedAt
        )
    }
}
