import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Makes the request's bearer token available to the handlers (the generated API doesn't pass security
/// headers through).
struct BearerTokenMiddleware: ServerMiddleware {
    @TaskLocal static var token: String?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var token: String?
        if let header = request.headerFields[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        {
            token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        }
        return try await Self.$token.withValue(token) { try await next(request, body, metadata) }
    }
}

