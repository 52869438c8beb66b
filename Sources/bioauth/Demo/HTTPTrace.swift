import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Prints each HTTP call of the demo's phones (`--verbose`): method, path, status. Never headers or bodies,
/// so no token or password is shown.
struct HTTPTrace: ClientMiddleware {
    let phone: String

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        print("    ⇄ [\(phone)] \(request.method) \(request.path ?? "") → \(response.status.code)")
        return (response, responseBody)
    }
}
