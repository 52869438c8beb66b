import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Makes the request's credentials available to the handlers (the generated API doesn't pass security headers through):
/// a bearer token, HTTP Basic client credentials (the token endpoint's), or the cookies (a QR sign-in's browser binding).
struct BearerTokenMiddleware: ServerMiddleware {
    @TaskLocal static var token: String?
    /// The request's `Cookie` header fields, joined.
    @TaskLocal static var cookies: String?
    /// `Set-Cookie` values a handler adds to its response. Set here rather than through the generated response headers,
    /// which would percent-encode them.
    @TaskLocal static var responseCookies: ResponseCookies?
    /// A service client's id and secret from `Authorization: Basic`, each form-urlencoded as RFC 6749 §2.3.1 says.
    @TaskLocal static var clientCredentials: (id: String, secret: String)?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var token: String?
        var credentials: (id: String, secret: String)?
        if let header = request.headerFields[.authorization], header.count > 7 {
            let scheme = header.prefix(7).lowercased()
            if scheme == "bearer " {
                token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
            } else if scheme.hasPrefix("basic ") {
                credentials = Self.basic(String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces))
            }
        }
        let cookies = request.headerFields[values: .cookie].joined(separator: "; ")
        let setCookies = ResponseCookies()
        var (response, responseBody) = try await Self.$token.withValue(token) {
            try await Self.$clientCredentials.withValue(credentials) {
                try await Self.$cookies.withValue(cookies.isEmpty ? nil : cookies) {
                    try await Self.$responseCookies.withValue(setCookies) { try await next(request, body, metadata) }
                }
            }
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

    /// `base64(urlencode(id) ":" urlencode(secret))`, or nil when it is not that.
    static func basic(_ encoded: String) -> (id: String, secret: String)? {
        guard encoded.utf8.count <= 1024, let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        func decoded(_ part: Substring) -> String? { String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
        guard let id = decoded(text[..<colon]), let secret = decoded(text[text.index(after: colon)...]) else { return nil }
        return (id, secret)
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
