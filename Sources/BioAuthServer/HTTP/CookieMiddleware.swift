import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Cookies for the handlers, which the generated API does not pass through: the request's (a QR sign-in's browser
/// binding), and the `Set-Cookie` values a handler adds to its response. Those are set here rather than through the
/// generated response headers, which would percent-encode them.
struct CookieMiddleware: ServerMiddleware {
    /// The request's `Cookie` header fields, joined.
    @TaskLocal static var cookies: String?
    /// Where a handler adds the `Set-Cookie` values of its response.
    @TaskLocal static var responseCookies: ResponseCookies?
    /// The operations that use cookies: a QR sign-in's, which bind its code to the browser that showed it.
    static let operations: Set<String> = ["createQRSignIn", "getQRSignInSession"]

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // The operations that read or set a cookie; every other request (sign-ins, payments) passes straight through.
        guard Self.operations.contains(operationID) else { return try await next(request, body, metadata) }
        let cookies = request.headerFields[values: .cookie].joined(separator: "; ")
        let setCookies = ResponseCookies()
        var (response, responseBody) = try await Self.$cookies.withValue(cookies.isEmpty ? nil : cookies) {
            try await Self.$responseCookies.withValue(setCookies) { try await next(request, body, metadata) }
        }
        for cookie in setCookies.values { response.headerFields.append(HTTPField(name: .setCookie, value: cookie)) }
        return (response, responseBody)
    }

    /// The value of the request's cookie `name` (RFC 6265 §5.4: `name=value` pairs separated by `;`), if it sent one.
    static func cookie(_ name: String) -> String? {
        guard let cookies else { return nil }
        for pair in cookies.split(separator: ";") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == name { return String(parts[1]) }
        }
        return nil
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
