import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Makes the request's `Authorization` credentials available to the handlers (the generated API doesn't pass security
/// headers through): a bearer token, or HTTP Basic client credentials (the token endpoint's).
struct BearerTokenMiddleware: ServerMiddleware {
    @TaskLocal static var token: String?
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
        return try await Self.$token.withValue(token) {
            try await Self.$clientCredentials.withValue(credentials) { try await next(request, body, metadata) }
        }
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
