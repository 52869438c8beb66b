import HTTPTypes
import Logging
import OpenAPIRuntime

/// Decides who is asking before an operation's body is read, by the operation's ``OperationPolicy/credential``: a
/// customer's session for the customer's operations, a service token holding the operation's scope for the bank's, a
/// service client's id and secret (HTTP Basic) at the OAuth endpoints. A request without the credential its operation
/// needs is refused (`unauthenticated`, `invalid_service_token`, `insufficient_scope`, `invalid_client`,
/// `unauthorized_client`) whatever its body holds, so a malformed body tells nothing to someone who may not call the
/// operation, and no body is parsed for them. Whom it authenticated goes into the request's ``RequestScope``.
///
/// An operation the policy table lacks is refused as a server error: never served without a credential.
struct CredentialMiddleware: ServerMiddleware {
    let service: BioAuthService
    let logger: Logger

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let scope = RequestScope.current
        guard let policy = OperationPolicy.of(operationID) else {
            logger.error("an operation has no row in the policy table", metadata: ["operation": "\(operationID)"])
            throw APIError.internalError
        }
        switch policy.credential {
        case .none:
            return try await next(request, body, metadata)
        case .session:
            let session = try await service.authenticate(bearer: scope.bearerToken)
            return try await RequestScope.with(\.session, session) { try await next(request, body, metadata) }
        case .service(let required):
            let client = try await service.authenticateService(bearer: scope.bearerToken, scope: required)
            return try await RequestScope.with(\.service, client) { try await next(request, body, metadata) }
        case .client(let required):
            var id: String?
            var secret: String?
            if case .basic(let sentID, let sentSecret) = scope.authorization { (id, secret) = (sentID, sentSecret) }
            let client = try await service.serving(scope.caller).authenticateClient(id, secret: secret, scope: required)
            return try await RequestScope.with(\.client, client) { try await next(request, body, metadata) }
        }
    }
}
