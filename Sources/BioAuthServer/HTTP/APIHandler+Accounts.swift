import BioAuthCore
import Foundation
import OpenAPIRuntime

/// Meta, accounts, sessions (password and biometric sign-in) and the account's audit log.
extension APIHandler {
    // MARK: Meta

    func health(_ input: Operations.Health.Input) async throws -> Operations.Health.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    func ready(_ input: Operations.Ready.Input) async throws -> Operations.Ready.Output {
        try await service.checkReadiness()
        return .ok(.init(body: .json(.init(status: .ok))))
    }

    func openAPIDocument(_ input: Operations.OpenAPIDocument.Input) async throws -> Operations.OpenAPIDocument.Output {
        .ok(.init(body: .yaml(HTTPBody(openAPIDocument))))
    }

    // MARK: Accounts

    func createAccount(_ input: Operations.CreateAccount.Input) async throws -> Operations.CreateAccount.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let account = try await service.createAccount(username: request.username, password: request.password)
        return .created(.init(body: .json(.init(accountId: account.id, username: account.username, createdAt: account.createdAt))))
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let session = try session()
        return .ok(
            .init(
                body: .json(
                    .init(
                        accountId: session.accountID,
                        username: session.username,
                        sessionId: session.sessionID,
                        installationId: session.installationID,
                        signInMethod: Components.Schemas.Me.SignInMethodPayload(rawValue: session.method.rawValue) ?? .password,
                        deviceId: session.deviceID,
                        passkeyId: session.passkeyID
                    )
                )
            )
        )
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        try await service.changePassword(session: try session(), current: request.currentPassword, new: request.newPassword)
        return .noContent(.init())
    }

    func createCustomerRecoveryCodes(
        _ input: Operations.CreateCustomerRecoveryCodes.Input
    ) async throws -> Operations.CreateCustomerRecoveryCodes.Output {
        let issued = try await service.createRecoveryCodes(session: try session())
        return .created(.init(headers: .init(cacheControl: .noStore), body: .json(.init(codes: issued.codes, createdAt: issued.createdAt))))
    }

    func resetPassword(_ input: Operations.ResetPassword.Input) async throws -> Operations.ResetPassword.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        try await service.resetPassword(username: request.username, code: request.code, newPassword: request.newPassword)
        return .noContent(.init())
    }

    // MARK: Sessions

    func signInWithPassword(_ input: Operations.SignInWithPassword.Input) async throws -> Operations.SignInWithPassword.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let tokens = try await counted(
            { service.metrics.signIn(.password, outcome: $0) },
            {
                try await service.signInWithPassword(username: request.username, password: request.password, installationID: request.installationId)
            }
        )
        return .created(.init(body: .json(.init(tokens))))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let tokens = try await counted(
            { service.metrics.signIn(.refresh, outcome: $0) },
            {
                try await service.refresh(token: request.refreshToken)
            }
        )
        return .ok(.init(body: .json(.init(tokens))))
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        try await service.signOut(try session())
        return .noContent(.init())
    }

    func createStepUpChallenge(_ input: Operations.CreateStepUpChallenge.Input) async throws -> Operations.CreateStepUpChallenge.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        return .created(.init(body: .json(issued(try await service.createStepUpChallenge(keyID: body.keyId, session: try session())))))
    }

    func stepUpSession(_ input: Operations.StepUpSession.Input) async throws -> Operations.StepUpSession.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let proof = try DeviceProof(keyID: body.keyId, counter: body.counter, signature: body.signature, appAttestAssertion: body.appAttestAssertion)
        let result = try await service.stepUp(proof, challengeID: body.challengeId, action: body.action, session: try session())
        return .ok(
            .init(
                body: .json(
                    .init(acr: result.acr, authTime: result.authTime, stepUpExpiresAt: result.expiresAt, action: result.action?.rawValue)
                )
            )
        )
    }

    func createSignInChallenge(_ input: Operations.CreateSignInChallenge.Input) async throws -> Operations.CreateSignInChallenge.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        return .created(.init(body: .json(issued(try await service.createSignInChallenge(keyID: request.keyId)))))
    }

    func signInWithBiometrics(_ input: Operations.SignInWithBiometrics.Input) async throws -> Operations.SignInWithBiometrics.Output {
        guard case .json(let request) = input.body else { throw Self.unreadableBody }
        let tokens = try await counted(
            { service.metrics.signIn(.biometric, outcome: $0) },
            {
                try await service.signInWithBiometrics(
                    challengeID: request.challengeId,
                    keyID: request.keyId,
                    counter: request.counter,
                    signature: request.signature,
                    appAttestAssertion: request.appAttestAssertion
                )
            }
        )
        return .created(.init(body: .json(.init(tokens))))
    }

    // MARK: Audit

    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let before = try input.query.before.map(AuditCursor.init(parsing:))
        let page = try await service.auditEvents(account: try session().accountID, limit: limit, before: before)
        return .ok(
            .init(
                body: .json(
                    .init(
                        events: page.events.map { event in
                            .init(
                                eventId: event.id,
                                occurredAt: event.occurredAt,
                                kind: event.kind,
                                outcome: event.succeeded ? .success : .failure,
                                accountId: event.accountID,
                                deviceId: event.deviceID,
                                sessionId: event.sessionID,
                                code: event.code,
                                operatorId: event.operatorID,
                                reason: event.reason,
                                passkeyId: event.passkeyID
                            )
                        },
                        next: page.next?.text
                    )
                )
            )
        )
    }
}
