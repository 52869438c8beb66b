import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The outermost middleware: gives the request its ``RequestTrace`` (request id, returned in `X-Request-Id`; the
/// caller's W3C trace), logs one line per request (method, path, route, status, a problem's code, time; never headers, bodies or query
/// strings), counts and times it in the metrics, refuses bodies over the size limit, bodies that cannot be read, and JSON bodies that
/// are not strict RFC 8259 JSON or name a member twice, and turns the router's own errors (no such route, body
/// too large) into problem documents: 405 with `Allow` for a path that exists with other methods, 404 otherwise.
struct HTTPProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBodySize: Int
    /// The API's paths and their methods.
    var routes = RouteMethods()
    /// Where requests, their durations and the problems answered are counted.
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let trace = RequestTrace(requestIDHeader: request.headers[.requestID], traceparent: request.headers[.traceparent])
        // Every line of the request carries `request_id` (the metadata provider adds it); Hummingbird's own id of the
        // request would be a second one, which no log reader could match with the X-Request-Id header.
        var context = context
        context.logger[metadataKey: "hb.request.id"] = nil
        let answered = AnsweredProblem()
        return try await RequestScope.$current.withValue(RequestScope(trace: trace, answeredProblem: answered)) {
            metrics.requestsInFlight(1)
            defer { metrics.requestsInFlight(-1) }
            let start = ContinuousClock.now
            var response = try await respond(request, context: context, next: next)
            response.headers[.requestID] = trace.requestID
            let elapsed = ContinuousClock.now - start
            // The template the router matched; Hummingbird names a request that matched none "NotFound".
            let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
            metrics.request(method: request.method.rawValue, route: route, status: response.status.code, duration: elapsed)
            let milliseconds = Double(elapsed.nanoseconds) / 1e6
            var metadata: Logger.Metadata = [
                "method": "\(request.method.rawValue)", "route": "\(route)", "status": .stringConvertible(response.status.code),
                "duration_ms": .stringConvertible((milliseconds * 10).rounded() / 10),
            ]
            // A refusal's stable code, so that a log search finds every `invalid_signature` without reading bodies.
            let code = answered.code.map { " \($0.rawValue)" } ?? ""
            if let problem = answered.code { metadata["problem"] = "\(problem.rawValue)" }
            context.logger.info(
                "\(request.method) \(request.uri.path) \(response.status.code)\(code) \(String(format: "%.1f", milliseconds))ms",
                metadata: metadata
            )
            return response
        }
    }

    private func respond(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        var response: Response
        do {
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodySize {
                throw APIError(.bodyTooLarge, "The body is larger than \(maxBodySize) bytes.")
            }
            do {
                // Held on the request from here on (collectBody keeps it there), its size bounded. Whether it is strict
                // JSON is decided after the operation's credential (StrictJSONMiddleware), so that no body is parsed for
                // a caller who may not call the operation.
                _ = try await request.collectBody(upTo: maxBodySize)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw APIError(.bodyTooLarge, "The body is larger than \(maxBodySize) bytes.")
            } catch {
                // The client's fault, not the server's: a bad chunk size, or a body shorter than its
                // Content-Length before the connection closed. Not logged as an error.
                context.logger.notice("request body unreadable", metadata: ["error": "\(type(of: error))"])
                throw APIError(.malformedRequest, "The body could not be read: its framing is invalid or the connection ended early.")
            }
            response = try await next(request, context)
        } catch let error as APIError {
            response = answer(error)
        } catch let error as HTTPError {
            let allowed = error.status == .notFound ? routes.methods(for: request.uri.path) : []
            if allowed.isEmpty {
                response = answer(Self.apiError(for: error.status))
            } else {
                var problem = answer(APIError(.methodNotAllowed, "This path takes \(allowed.map(\.rawValue).joined(separator: ", ")) only."))
                problem.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
                response = problem
            }
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            response = answer(.internalError)
        }
        // Every answer under a browser page's path carries the page's security headers, its 404s, 405s and other problems
        // included (the page's own responses already do).
        if let page = Self.browserPageHeaders(for: request.uri.path) {
            for field in page where response.headers[field.name] == nil { response.headers.append(field) }
        }
        return response
    }

    /// The security headers of the browser pages whose paths `path` is under: the operator console (`/console`) and the
    /// passkey web page (`/web`); nil for the API.
    static func browserPageHeaders(for path: String) -> HTTPFields? {
        func under(_ prefix: String) -> Bool { path == prefix || path.hasPrefix(prefix + "/") }
        if under("/console") { return Console.securityHeaders }
        if under("/web") { return PasskeyWebPage.securityHeaders }
        return nil
    }

    /// The problem document for `error`, counted in the metrics and noted for the request's log line.
    private func answer(_ error: APIError) -> Response {
        metrics.problem(error.code)
        AnsweredProblem.noteOnCurrentRequest(error.code)
        return Self.problem(error)
    }

    static func problem(_ error: APIError) -> Response {
        var headers = HTTPFields()
        for field in error.httpHeaderFields { headers.append(field) }
        return Response(status: error.httpStatus, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: error.jsonBody())))
    }

    private static func apiError(for status: HTTPResponse.Status) -> APIError {
        switch status {
        case .notFound, .methodNotAllowed: APIError(.notFound, "There is no such endpoint.")
        case .contentTooLarge: APIError(.bodyTooLarge, "The body is too large.")
        case .badRequest: APIError(.malformedRequest, "The request is malformed.")
        default: .internalError
        }
    }
}

extension HTTPField.Name {
    /// `X-Request-Id`: the caller's id for a request, or the one the server gave it; returned on every response.
    static let requestID = HTTPField.Name("X-Request-Id")!
}
