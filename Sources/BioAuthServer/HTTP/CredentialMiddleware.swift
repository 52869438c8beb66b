import HTTPTypes
import OpenAPIRuntime

/// Decides who is asking before an operation's body is read: a customer's session for the customer's operations, a
/// service client holding the operation's scope for the bank's. A request without the credential its operation needs
/// is refused (`unauthenticated`, `invalid_service_token`, `insufficient_scope`) whatever its body holds, so a malformed
/// body tells nothing to someone who may not call the operation, and no body is parsed for them.
///
/// The table covers every operation the contract protects; `CredentialMiddlewareTests` fails when an operation of the
/// contract with `bearerAuth` is missing from it, so a new protected operation cannot ship without its credential.
struct CredentialMiddleware: ServerMiddleware {
    /// The credential an operation needs.
    enum Required: Sendable, Equatable {
        /// A customer's access token.
        case session
        /// A service token holding `scope`.
        case service(scope: String)
    }

    let service: BioAuthService

    /// Every operation the contract protects with `bearerAuth`, by operation id.
    static let required: [String: Required] = [
        "signOut": .session, "getMe": .session, "changePassword": .session,
        "createPasskeyRegistrationOptions": .session, "registerPasskey": .session, "listPasskeys": .session, "revokePasskey": .session,
        "createRegistrationChallenge": .session, "registerDevice": .session, "listDevices": .session, "revokeDevice": .session,
        "createPaymentPINChallenge": .session, "setPaymentPIN": .session,
        "createPayment": .session, "listPayments": .session, "getPayment": .session, "createPaymentChallenge": .session,
        "authorizePaymentWithBiometrics": .session, "authorizePaymentWithPIN": .session, "cancelPayment": .session,
        "listAuditEvents": .session,
        "listApprovals": .session, "getApproval": .session, "approveApproval": .session, "denyApproval": .session,
        "scanQRSignIn": .session,
        "introspectToken": .service(scope: "sessions:introspect"), "registerPayee": .service(scope: "payees:write"),
        "createServicePayment": .service(scope: "payments:write"),
        "createWebhookEndpoint": .service(scope: "webhooks:write"), "listWebhookEndpoints": .service(scope: "webhooks:write"),
        "deleteWebhookEndpoint": .service(scope: "webhooks:write"), "rotateWebhookSecret": .service(scope: "webhooks:write"),
        "listWebhookDeliveries": .service(scope: "webhooks:write"),
    ]

    /// The session this request was authenticated with (operations that need `.session`).
    @TaskLocal static var session: AuthenticatedSession?
    /// The service client this request was authenticated with (operations that need `.service`).
    @TaskLocal static var client: AuthenticatedService?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        switch Self.required[operationID] {
        case nil:
            return try await next(request, body, metadata)
        case .session:
            let session = try await service.authenticate(bearer: BearerTokenMiddleware.token)
            return try await Self.$session.withValue(session) { try await next(request, body, metadata) }
        case .service(let scope):
            let client = try await service.authenticateService(bearer: BearerTokenMiddleware.token, scope: scope)
            return try await Self.$client.withValue(client) { try await next(request, body, metadata) }
        }
    }
}
