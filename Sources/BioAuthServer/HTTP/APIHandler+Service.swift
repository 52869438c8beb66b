import BioAuthCore
import Foundation
import OpenAPIRuntime

/// The bank's backend: the token endpoint, introspection, payees, payments it asks for, webhook endpoints.
extension APIHandler {
    // MARK: Service clients

    func issueServiceToken(_ input: Operations.IssueServiceToken.Input) async throws -> Operations.IssueServiceToken.Output {
        guard case .urlEncodedForm(let form) = input.body else { throw Self.unreadableBody }
        guard (form.scope?.utf8.count ?? 0) <= 512 else { throw APIError(.malformedRequest, "scope is longer than 512 bytes.") }
        let token: Components.Schemas.ServiceToken
        switch try await service.grantToken(client: try client(), grantType: form.grantType, scope: form.scope, authRequestID: form.authReqId) {
        case .service(let issued):
            token = .init(
                accessToken: issued.accessToken,
                tokenType: .bearer,
                expiresIn: issued.expiresIn,
                scope: issued.scopes.joined(separator: " ")
            )
        case .approval(let redeemed):
            token = .init(
                accessToken: redeemed.tokens?.accessToken,
                tokenType: .bearer,
                expiresIn: redeemed.tokens.map { Int($0.accessTokenExpiresAt.timeIntervalSince(service.now).rounded()) },
                refreshToken: redeemed.tokens?.refreshToken,
                signedApproval: .init(redeemed.approval)
            )
        }
        return .ok(.init(headers: .init(cacheControl: .noStore), body: .json(token)))
    }

    func introspectToken(_ input: Operations.IntrospectToken.Input) async throws -> Operations.IntrospectToken.Output {
        guard case .urlEncodedForm(let form) = input.body else { throw Self.unreadableBody }
        guard form.token.utf8.count <= 512 else { throw APIError(.malformedRequest, "token is longer than 512 bytes.") }
        let found = try await service.introspect(form.token)
        return .ok(
            .init(
                body: .json(
                    .init(
                        active: found.active,
                        tokenType: found.tokenType.flatMap { .init(rawValue: $0) },
                        sub: found.subject,
                        username: found.username,
                        sid: found.sessionID,
                        exp: found.expiresAt.map { Int64($0.timeIntervalSince1970) },
                        iat: found.issuedAt.map { Int64($0.timeIntervalSince1970) },
                        clientId: found.clientID,
                        scope: found.scope,
                        amr: found.methods,
                        deviceId: found.deviceID,
                        appAttest: found.appAttested,
                        passkeyId: found.passkeyID,
                        coolingOffUntil: found.coolingOffUntil.map { Int64($0.timeIntervalSince1970) },
                        acr: found.assurance?.acr,
                        authTime: found.assurance.map { Int64($0.authTime.timeIntervalSince1970) },
                        factorAuthTimes: found.assurance.map {
                            .init(additionalProperties: $0.factorAuthTimes.mapValues { Int64($0.timeIntervalSince1970) })
                        },
                        stepUpExpiresAt: found.assurance?.stepUpExpiresAt.map { Int64($0.timeIntervalSince1970) },
                        stepUpAction: found.assurance?.stepUpAction,
                        deviceKeyId: found.assurance?.deviceKeyID
                    )
                )
            )
        )
    }

    func registerPayee(_ input: Operations.RegisterPayee.Input) async throws -> Operations.RegisterPayee.Output {
        let client = try serviceClient()
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let (payee, created) = try await service.registerPayee(
            id: body.payeeId,
            name: body.name,
            verification: body.verification.rawValue,
            client: client
        )
        let wire = Components.Schemas.Payee(
            payeeId: payee.id,
            name: payee.name,
            verification: .init(rawValue: payee.verification.rawValue) ?? .unverified,
            createdAt: payee.createdAt,
            updatedAt: payee.updatedAt
        )
        return created ? .created(.init(body: .json(wire))) : .ok(.init(body: .json(wire)))
    }

    func createBindingCode(_ input: Operations.CreateBindingCode.Input) async throws -> Operations.CreateBindingCode.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        return .created(.init(headers: .init(cacheControl: .noStore), body: .json(try await code(.bind, for: body))))
    }

    func createRecoveryCode(_ input: Operations.CreateRecoveryCode.Input) async throws -> Operations.CreateRecoveryCode.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        return .created(.init(headers: .init(cacheControl: .noStore), body: .json(try await code(.recovery, for: body))))
    }

    func createPasswordResetCode(_ input: Operations.CreatePasswordResetCode.Input) async throws -> Operations.CreatePasswordResetCode.Output {
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        return .created(.init(headers: .init(cacheControl: .noStore), body: .json(try await code(.passwordReset, for: body))))
    }

    /// A one-time code of `purpose` for the account `body` names, asked for by the calling service client.
    private func code(_ purpose: BindingCode.Purpose, for body: Components.Schemas.BindingCodeRequest) async throws -> Components.Schemas.BindingCode
    {
        let issued = try await service.issueBindingCode(account: body.accountId, purpose: purpose, client: try serviceClient())
        return .init(code: issued.code, accountId: issued.accountID, expiresAt: issued.expiresAt, purpose: .init(rawValue: purpose.rawValue) ?? .bind)
    }

    func createServicePayment(_ input: Operations.CreateServicePayment.Input) async throws -> Operations.CreateServicePayment.Output {
        let client = try serviceClient()
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let payment = try await service.createServicePayment(
            account: body.accountId,
            amountMinor: body.amountMinor,
            currency: body.currency,
            payeeID: body.payeeId,
            memo: body.memo,
            idempotencyKey: input.headers.idempotencyKey,
            client: client
        )
        return .created(.init(body: .json(try .init(payment))))
    }

    // MARK: Webhooks

    func createWebhookEndpoint(_ input: Operations.CreateWebhookEndpoint.Input) async throws -> Operations.CreateWebhookEndpoint.Output {
        let client = try serviceClient()
        guard case .json(let body) = input.body else { throw Self.unreadableBody }
        let (endpoint, secret) = try await service.createWebhookEndpoint(url: body.url, events: body.events, client: client)
        return .created(
            .init(
                body: .json(
                    .init(
                        endpointId: endpoint.id,
                        url: endpoint.url,
                        events: endpoint.events,
                        createdAt: endpoint.createdAt,
                        secret: secret
                    )
                )
            )
        )
    }

    func listWebhookEndpoints(_ input: Operations.ListWebhookEndpoints.Input) async throws -> Operations.ListWebhookEndpoints.Output {
        let client = try serviceClient()
        return .ok(
            .init(
                body: .json(
                    .init(
                        endpoints: try await service.webhookEndpoints(client: client).map { endpoint in
                            .init(
                                endpointId: endpoint.id,
                                url: endpoint.url,
                                events: endpoint.events,
                                createdAt: endpoint.createdAt,
                                previousSecretExpiresAt: endpoint.previousSecretExpiresAt
                            )
                        }
                    )
                )
            )
        )
    }

    func deleteWebhookEndpoint(_ input: Operations.DeleteWebhookEndpoint.Input) async throws -> Operations.DeleteWebhookEndpoint.Output {
        let client = try serviceClient()
        try await service.deleteWebhookEndpoint(input.path.endpointId, client: client)
        return .noContent(.init())
    }

    func rotateWebhookSecret(_ input: Operations.RotateWebhookSecret.Input) async throws -> Operations.RotateWebhookSecret.Output {
        let client = try serviceClient()
        let rotated = try await service.rotateWebhookSecret(input.path.endpointId, client: client)
        return .ok(
            .init(
                body: .json(
                    .init(
                        endpointId: input.path.endpointId,
                        secret: rotated.secret,
                        previousSecretExpiresAt: rotated.previousExpiresAt
                    )
                )
            )
        )
    }

    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws -> Operations.ListWebhookDeliveries.Output {
        let client = try serviceClient()
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let deliveries = try await service.webhookDeliveries(input.path.endpointId, limit: limit, client: client)
        return .ok(
            .init(
                body: .json(
                    .init(
                        deliveries: deliveries.map { delivery in
                            .init(
                                eventId: delivery.eventID,
                                eventType: delivery.eventType,
                                status: .init(rawValue: delivery.status) ?? .pending,
                                attempts: delivery.attempts,
                                lastStatusCode: delivery.lastStatusCode,
                                lastError: delivery.lastError,
                                createdAt: delivery.createdAt,
                                nextAttemptAt: delivery.nextAttemptAt,
                                deliveredAt: delivery.deliveredAt
                            )
                        }
                    )
                )
            )
        )
    }
}
