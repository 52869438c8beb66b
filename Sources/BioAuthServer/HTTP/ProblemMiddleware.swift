import BioAuthCore
import HTTPTypes
import Logging
import OpenAPIRuntime

/// Turns every failure of an operation into a problem document.
///
/// An ``APIError`` becomes its own response. A request the generated code could not turn into the
/// operation's input (bad JSON, missing or unknown fields, wrong types or content type) is the client's
/// fault: 400 `malformed_request`. Anything else is the server's: it is logged and answered with a bare
/// 500 `internal_error` that discloses nothing.
struct ProblemMiddleware: ServerMiddleware {
    let logger: Logger
    /// Where each problem answered is counted by its code.
    let metrics: ServerMetrics

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        do {
            return try await next(request, body, metadata)
        } catch let error as ServerError {
            if let apiError = error.underlyingError as? APIError { return response(apiError, operationID: operationID) }
            if error.operationInput == nil {
                if OperationPolicy.of(operationID)?.idempotencyKey == true, request.headerFields[Self.idempotencyKey] == nil {
                    // The contract requires the header, so the generated code refuses its absence before the handler
                    // would: answer with the code the docs give for a missing or unfit key, not a generic one.
                    return response(
                        APIError(.invalidIdempotencyKey, "Send an Idempotency-Key header: 1-128 visible ASCII characters."),
                        operationID: operationID
                    )
                }
                return response(APIError(.malformedRequest, Self.describe(error)), operationID: operationID)
            }
            logger.error("operation failed", metadata: ["operation": "\(operationID)", "error": "\(String(reflecting: error.underlyingError))"])
            return response(.internalError, operationID: operationID)
        } catch let error as APIError {
            return response(error, operationID: operationID)
        } catch {
            logger.error("operation failed", metadata: ["operation": "\(operationID)", "error": "\(String(reflecting: error))"])
            return response(.internalError, operationID: operationID)
        }
    }

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// The problem document for `error`, counted; at the OAuth endpoints (``OperationPolicy/oauthProblems``) with OAuth's
    /// `error` and `error_description`.
    private func response(_ error: APIError, operationID: String) -> (HTTPResponse, HTTPBody?) {
        metrics.problem(error.code)
        AnsweredProblem.noteOnCurrentRequest(error.code)
        let body = HTTPBody(error.jsonBody(oauth: OperationPolicy.of(operationID)?.oauthProblems == true))
        return (HTTPResponse(status: error.httpStatus, headerFields: error.httpHeaderFields), body)
    }

    /// What was wrong with the request, in words that name fields but never echo values.
    private static func describe(_ error: ServerError) -> String {
        if let decoding = error.underlyingError as? DecodingError {
            switch decoding {
            case .keyNotFound(let key, _): return "The field \(key.stringValue) is missing."
            case .typeMismatch(_, let context), .valueNotFound(_, let context):
                return "The field \(path(context.codingPath)) has the wrong type."
            case .dataCorrupted(let context):
                return context.codingPath.isEmpty
                    ? "The body is not valid JSON for this operation."
                    : "The field \(path(context.codingPath)) is not valid (\(context.debugDescription.prefix(120)))."
            @unknown default: break
            }
        }
        return "The request does not match the API: \(error.causeDescription.prefix(160))."
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
