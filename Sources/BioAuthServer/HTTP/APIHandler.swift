import BioAuthCore
import Foundation
import OpenAPIRuntime

/// The generated API's operations, translated to and from ``BioAuthService``. No decisions are made here.
struct APIHandler: APIProtocol {
    let service: BioAuthService
    let openAPIDocument: Data

    private func session() async throws -> AuthenticatedSession {
        try await service.authenticate(bearer: BearerTokenMiddleware.token)
    }

    // MARK: Meta

    func health(_ input: Operations.Health.Input) async throws -> Operations.Health.Output {
        _ = try await service.database.transaction { db in try await db.raw("SELECT 1 AS one").first() }
        return .ok(.init(body: .json(.init(status: .ok))))
    }

    func openAPIDocument(_ input: Operations.OpenAPIDocument.Input) async throws -> Operations.OpenAPIDocument.Output {
        .ok(.init(body: .yaml(HTTPBody(openAPIDocument))))
    }

    // MARK: Accounts

    func createAccount(_ input: Operations.CreateAccount.Input) async throws -> Operations.CreateAccount.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let account = try await service.createAccount(username: request.username, password: request.password)
        return .created(.init(body: .json(.init(accountId: account.id, username: account.username, createdAt: account.createdAt))))
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let session = try await session()
        return .ok(.init(body: .json(.init(
            accountId: session.accountID, username: session.username, sessionId: session.sessionID,
            installationId: session.installationID, signInMethod: session.method == .biometric ? .biometric : .password,
            deviceId: session.deviceID))))
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        try await service.changePassword(session: try await session(), current: request.currentPassword, new: request.newPassword)
        return .noContent(.init())
    }

    // MARK: Sessions

    func signInWithPassword(_ input: Operations.SignInWithPassword.Input) async throws -> Operations.SignInWithPassword.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let tokens = try await service.signInWithPassword(
            username: request.username, password: request.password, installationID: request.installationId)
        return .created(.init(body: .json(Self.tokens(tokens))))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        return .ok(.init(body: .json(Self.tokens(try await service.refresh(token: request.refreshToken)))))
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        try await service.signOut(try await session())
        return .noContent(.init())
    }

    func createSignInChallenge(_ input: Operations.CreateSignInChallenge.Input) async throws -> Operations.CreateSignInChallenge.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        return .created(.init(body: .json(challenge(try await service.createSignInChallenge(keyID: request.keyId)))))
    }

    func signInWithBiometrics(_ input: Operations.SignInWithBiometrics.Input) async throws -> Operations.SignInWithBiometrics.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let tokens = try await service.signInWithBiometrics(
            challengeID: request.challengeId, keyID: request.keyId, counter: request.counter, signature: request.signature)
        return .created(.init(body: .json(Self.tokens(tokens))))
    }

    // MARK: Devices

    func createRegistrationChallenge(_ input: Operations.CreateRegistrationChallenge.Input) async throws
        -> Operations.CreateRegistrationChallenge.Output
    {
        .created(.init(body: .json(challenge(try await service.createRegistrationChallenge(session: try await session())))))
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let session = try await session()
        let registration = try DeviceRegistration(
            challengeID: request.challengeId, publicKey: request.publicKey, keyID: request.keyId,
            biometryKind: try Self.kind(request.biometryKind), name: request.deviceName, counter: request.counter,
            signature: request.signature)
        return .created(.init(body: .json(try Self.device(try await service.registerDevice(session: session, registration)))))
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let devices = try await service.devices(of: try await session())
        return .ok(.init(body: .json(.init(devices: try devices.map(Self.device)))))
    }

    func revokeDevice(_ input: Operations.RevokeDevice.Input) async throws -> Operations.RevokeDevice.Output {
        try await service.revokeDevice(input.path.deviceId, session: try await session())
        return .noContent(.init())
    }

    // MARK: Audit

    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let events = try await service.auditEvents(account: try await session().accountID, limit: limit)
        return .ok(.init(body: .json(.init(events: events.map { event in
            .init(
                eventId: event.id, occurredAt: event.occurredAt, kind: event.kind, outcome: event.succeeded ? .success : .failure,
                accountId: event.accountID, deviceId: event.deviceID, sessionId: event.sessionID, code: event.code)
        }))))
    }

    // MARK: Mapping

    private static func tokens(_ tokens: IssuedTokens) -> Components.Schemas.SessionTokens {
        .init(
            sessionId: tokens.sessionID, accountId: tokens.accountID, tokenType: .bearer, accessToken: tokens.accessToken,
            accessTokenExpiresAt: tokens.accessTokenExpiresAt, refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshTokenExpiresAt)
    }

    private func challenge(_ challenge: IssuedChallenge) -> Components.Schemas.Challenge {
        .init(
            challengeId: challenge.id, challenge: Base64URL.encode(challenge.challenge),
            purpose: challenge.purpose == .register ? .register : .login, relyingPartyId: service.configuration.relyingPartyID,
            keyId: challenge.keyID.map(Base64URL.encode), expiresAt: challenge.expiresAt)
    }

    /// The wire enum and ``BioAuthCore/BiometryKind`` share raw values.
    private static func kind(_ kind: Components.Schemas.BiometryKind) throws -> BiometryKind {
        guard let kind = BiometryKind(rawValue: kind.rawValue) else { throw APIError(.malformedRequest, "Unknown biometryKind.") }
        return kind
    }

    private static func device(_ device: DeviceInfo) throws -> Components.Schemas.Device {
        // Registration accepts only the wire's kinds, so every stored kind has a wire value.
        guard let kind = Components.Schemas.BiometryKind(rawValue: device.biometryKind.rawValue) else { throw APIError.internalError }
        return .init(
            deviceId: device.id, keyId: Base64URL.encode(device.publicKey.keyID), biometryKind: kind, deviceName: device.name,
            installationId: device.installationID, counter: device.counter, attestation: .none, createdAt: device.createdAt,
            lastUsedAt: device.lastUsedAt, revokedAt: device.revokedAt)
    }
}
