import BioAuthCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Decides a request's `Accept` header before the operation runs, and answers 406 `not_acceptable` when the client
/// accepts nothing the operation returns.
///
/// The generated server checks `Accept` only when it writes the response, after the operation has run: a request
/// that created an account or authorized a payment and sent `Accept: text/html` got a 500 while its change stayed
/// committed. Here the check comes first, so a refused request changes nothing. An acceptable header is then
/// removed from the request the generated code sees, which would otherwise parse it twice more per request (once
/// into the operation's input, which no handler reads, and once to check the response) — about a sixth of the
/// server's CPU for a request that does little else (docs/PERFORMANCE.md).
///
/// What an operation answers with is its ``OperationPolicy/produces`` (none for an operation that answers 204 No
/// Content). Problem documents (`application/problem+json`) are sent whatever `Accept` says, as RFC 9110 allows for error
/// responses: a client always learns why it was refused.
struct AcceptMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let accept = request.headerFields[.accept] else { return try await next(request, body, metadata) }
        var request = request
        request.headerFields[.accept] = nil
        // An operation that answers with no content has nothing for Accept to choose; the header is ignored.
        guard let produced = OperationPolicy.of(operationID)?.produces else { return try await next(request, body, metadata) }
        switch AcceptHeader.accepts(accept, produced) {
        case .yes:
            return try await next(request, body, metadata)
        case .no:
            throw APIError(.notAcceptable, "This operation answers with \(produced), which the Accept header excludes.")
        case .malformed:
            throw APIError(.malformedRequest, "The Accept header is not a list of media ranges.")
        }
    }
}
