import BioAuthCore
import Foundation

/// What the server knows about the request being served, in one task-local that the HTTP layer's middlewares fill in as
/// they learn it: its trace (``HTTPProblemMiddleware``), where it came from (``ClientAddressMiddleware``), its
/// `Authorization` (``AuthorizationMiddleware``), whom that authenticated (``CredentialMiddleware``) and its cookies
/// (``CookieMiddleware``).
///
/// Only the HTTP layer reads it. The rules are handed what they need: the caller (``Caller``, for rate limits and the
/// audit trail) through ``BioAuthService/serving(_:)``, the session or client as parameters.
struct RequestScope: Sendable {
    /// The request's `Authorization` header, as sent.
    enum Authorization: Sendable {
        /// A bearer token: a customer's access token, or a service token.
        case bearer(String)
        /// A service client's id and secret from `Authorization: Basic`, each form-urlencoded as RFC 6749 §2.3.1 says.
        case basic(id: String, secret: String)
    }

    var trace: RequestTrace?
    var origin: ClientAddress.Origin?
    var authorization: Authorization?
    /// The customer's session, for operations that need one.
    var session: AuthenticatedSession?
    /// The service token's client, for the bank's operations.
    var service: AuthenticatedService?
    /// The service client that sent its id and secret, for the OAuth endpoints.
    var client: AuthenticatedClient?
    /// The request's `Cookie` header fields, joined (operations whose policy reads cookies).
    var cookies: String?
    /// Where a handler adds the `Set-Cookie` values of its response (operations whose policy sets cookies).
    var responseCookies: ResponseCookies?
    /// The problem code the request was answered with, for its log line (set wherever a problem document is made).
    var answeredProblem: AnsweredProblem?

    /// The scope of the request this task serves; empty outside a request.
    @TaskLocal static var current = RequestScope()

    /// Runs `body` with the current scope's `field` set to `value`.
    static func with<Value, R>(
        _ field: WritableKeyPath<RequestScope, Value>,
        _ value: Value,
        _ body: () async throws -> R
    ) async rethrows -> R {
        var scope = current
        scope[keyPath: field] = value
        return try await $current.withValue(scope, operation: body)
    }

    /// Who is asking, as the rules count and record it.
    var caller: Caller { Caller(origin: origin) }

    /// The bearer token sent, if one was.
    var bearerToken: String? {
        if case .bearer(let token) = authorization { return token }
        return nil
    }

    /// The value of the request's cookie `name` (RFC 6265 §5.4: `name=value` pairs separated by `;`), if it sent one.
    func cookie(_ name: String) -> String? {
        guard let cookies else { return nil }
        for pair in cookies.split(separator: ";") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == name { return String(parts[1]) }
        }
        return nil
    }
}

/// The code of the problem document a request was answered with, noted where the document is made and read by the
/// request's log line.
final class AnsweredProblem: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: ProblemCode?

    /// Notes `code` (the last one noted wins: the document sent is the last made).
    func note(_ code: ProblemCode) { lock.withLock { stored = code } }

    var code: ProblemCode? { lock.withLock { stored } }

    /// Notes `code` on the current request, if there is one.
    static func noteOnCurrentRequest(_ code: ProblemCode) { RequestScope.current.answeredProblem?.note(code) }
}
