import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Cookies for the handlers, which the generated API does not pass through, for the operations whose
/// ``OperationPolicy/cookies`` says so (a QR sign-in's, which bind its code to the browser that showed it): the request's
/// cookies into its ``RequestScope``, and the `Set-Cookie` values a handler adds to its response. Those are set here
/// rather than through the generated response headers, which would percent-encode them.
struct CookieMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // Every other request (sign-ins, payments) passes straight through.
        guard OperationPolicy.of(operationID)?.cookies == true else { return try await next(request, body, metadata) }
        let cookies = request.headerFields[values: .cookie].joined(separator: "; ")
        let setCookies = ResponseCookies()
        var scope = RequestScope.current
        scope.cookies = cookies.isEmpty ? nil : cookies
        scope.responseCookies = setCookies
        var (response, responseBody) = try await RequestScope.$current.withValue(scope) { try await next(request, body, metadata) }
        for cookie in setCookies.values { response.headerFields.append(HTTPField(name: .setCookie, value: cookie)) }
        return (response, responseBody)
    }
}

/// The `Set-Cookie` values of one response.
final class ResponseCookies: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    /// Adds `value` (`name=value; attributes`).
    func add(_ value: String) { lock.withLock { stored.append(value) } }

    var values: [String] { lock.withLock { stored } }
}
