import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Reads the request's `Authorization` header into its ``RequestScope`` (the generated API doesn't pass security headers
/// through): a bearer token, or HTTP Basic client credentials. ``CredentialMiddleware`` then decides, by the operation's
/// ``OperationPolicy``, what it must be and whom it authenticates.
struct AuthorizationMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let header = request.headerFields[.authorization] else { return try await next(request, body, metadata) }
        let authorization = Self.parse(header)
        return try await RequestScope.with(\.authorization, authorization) { try await next(request, body, metadata) }
    }

    /// A bearer token or Basic credentials; nil for any other scheme, or a Basic value that is not
    /// `base64(urlencode(id) ":" urlencode(secret))`.
    static func parse(_ header: String) -> RequestScope.Authorization? {
        guard header.count > 7 else { return nil }
        let scheme = header.prefix(7).lowercased()
        if scheme == "bearer " { return .bearer(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)) }
        guard scheme.hasPrefix("basic "), let (id, secret) = basic(String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)) else {
            return nil
        }
        return .basic(id: id, secret: secret)
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
