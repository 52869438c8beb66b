import BioAuthCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Refuses a JSON body that is not strict JSON (RFC 8259) or names a member twice in one object, at every operation.
/// Parsers disagree on which of two same-named members wins, and on what JSON is (Foundation reads trailing commas):
/// refusing both ambiguities means what a gateway or a log sees is what is stored.
///
/// It runs after ``CredentialMiddleware``, so a caller without the operation's credential is refused for that and
/// learns nothing from the body. The body was already read, and its size bounded, by `HTTPProblemMiddleware`.
struct StrictJSONMiddleware: ServerMiddleware {
    let maxBodySize: Int

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let body, Self.isJSON(request.headerFields[.contentType]) else {
            return try await next(request, body, metadata)
        }
        let bytes = try await [UInt8](collecting: body, upTo: maxBodySize)
        if !bytes.isEmpty {
            switch JSONMemberNames.scan(bytes) {
            case .unique: break
            case .duplicate: throw APIError(.malformedRequest, "An object in the body names the same member more than once.")
            case .invalid: throw APIError(.malformedRequest, "The body is not strict JSON (RFC 8259).")
            }
        }
        return try await next(request, HTTPBody(bytes), metadata)
    }

    /// Whether a `Content-Type` is JSON (`application/json` or `…+json`, any parameters).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}
