import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// What every page shares: the frame a page renders into, refusals, redirects, security headers, reading forms and the
/// checks every form post passes (``acting(_:allowRestricted:_:)``).
extension Console {
    /// Runs `body` for a form post of a signed-in operator whose CSRF token and origin are right; 403 otherwise. Only
    /// signing out and choosing a password are `allowRestricted`: open to an operator who must choose their password.
    func acting(
        _ request: Request,
        allowRestricted: Bool = false,
        _ body: (ConsoleSessions.Session, [String: String]) async throws -> Response
    ) async throws -> Response {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        guard allowRestricted || !session.isRestricted else { return Self.redirect("/console/password") }
        guard sameOrigin(request) else { return forbidden(request, "error.origin", session: session) }
        let form = try await Self.form(request)
        guard let token = form["csrf"], Validation.constantTimeEqual(token.utf8, session.csrfToken.utf8) else {
            return forbidden(request, "error.csrf", session: session)
        }
        return try await body(session, form)
    }

    func page(
        _ request: Request,
        title: String,
        content: String,
        session: ConsoleSessions.Session?,
        flash: String? = nil,
        error: String? = nil,
        status: HTTPResponse.Status = .ok,
        languagesAt here: String = ""
    ) -> Response {
        let language = Self.language(request)
        var view: [String: Any] = ["title": title, "content": content, "t": language.text, "lang": language.rawValue, "here": here]
        if let session {
            view["operator"] = [
                "name": session.operator.name, "role": language["role.\(session.operator.role.rawValue)"], "csrf": session.csrfToken,
                "complete": !session.isRestricted,
            ]
            view["isAdmin"] = session.operator.role == .admin
        }
        if let flash { view["flash"] = flash }
        if let error { view["error"] = error }
        let html = templates.render(view, withTemplate: "page") ?? ""
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentLanguage] = language.rawValue
        // The switch's choice is remembered for the next pages.
        if request.uri.queryParameters.get("lang").flatMap(ConsoleLanguage.init(rawValue:)) != nil {
            headers[.setCookie] = "\(ConsoleLanguage.cookieName)=\(language.rawValue); Path=/; Secure; HttpOnly; SameSite=Strict"
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The page for an action the desk refused, saying why: 404 for an object the customer in the path does not have
    /// (another customer's device, say), 403 for a role that may not, 422 for the rest.
    func notDone(_ request: Request, _ error: SupportError, session: ConsoleSessions.Session) -> Response {
        let language = Self.language(request)
        let status: HTTPResponse.Status =
            switch error {
            case .notFound: .notFound
            case .notAllowed: .forbidden
            case .invalid: .unprocessableContent
            }
        return page(
            request,
            title: language["notDone"],
            content: "<h1>\(language["notDone"])</h1>",
            session: session,
            error: Self.explain(error, language: language),
            status: status
        )
    }

    /// A refusal in the page's language: the desk's reasons are English sentences for the command line and logs; the
    /// console says the common ones in its own words, and any other in English after a sentence in the page's language.
    static func explain(_ error: SupportError, language: ConsoleLanguage) -> String {
        let text = error.description
        let known: [(String, String)] = [
            ("a reason is required", "error.reason"), ("not pending", "error.notPending"), ("cannot do this to themself", "error.self"),
            ("only admins can do this", "error.admin"), ("viewers only read", "error.viewer"),
            ("there is already an operator named", "error.nameTaken"), ("an operator's name must be", "error.operatorName"),
            ("an operator's password must be", "error.passwordRule"), ("is already disabled", "error.alreadyDisabled"),
            ("is not disabled", "error.notDisabled"), ("is already", "error.sameRole"),
        ]
        if let key = known.first(where: { text.contains($0.0) })?.1 { return language[key] }
        let summary: String
        switch error {
        case .notFound: summary = language["error.notFoundObject"]
        case .notAllowed: summary = language["error.notAllowed"]
        case .invalid: summary = language["error.invalid"]
        }
        return language == .english ? "\(summary) \(text)" : "\(summary)（\(text)）"
    }

    /// A refusal page saying `key`'s sentence.
    func forbidden(_ request: Request, _ key: String, session: ConsoleSessions.Session?) -> Response {
        let language = Self.language(request)
        return page(
            request,
            title: language["refused"],
            content: "<h1>\(language["refused"])</h1>",
            session: session,
            error: language[key],
            status: .forbidden
        )
    }

    /// How the request's page writes times: the deployment's zone, the page's language, now.
    func consoleTime(_ request: Request) -> ConsoleTime {
        ConsoleTime(timeZone: service.configuration.consoleTimeZone, language: Self.language(request), now: service.clock.now)
    }

    /// The request's language (``ConsoleLanguage/of(query:cookie:acceptLanguage:)``).
    static func language(_ request: Request) -> ConsoleLanguage {
        ConsoleLanguage.of(
            query: request.uri.queryParameters.get("lang"),
            cookie: request.cookies[ConsoleLanguage.cookieName]?.value,
            acceptLanguage: request.headers[.acceptLanguage]
        )
    }

    static func redirect(_ location: String) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    /// No script, no framing, no caching of pages with customer data, no referrer to other sites.
    static let securityHeaders: HTTPFields = {
        var headers = HTTPFields.browserPage(
            contentSecurityPolicy: "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        )
        headers[.cacheControl] = "no-store"
        return headers
    }()

    /// The actions whose result a page says, by a fixed key (no text from the request is echoed).
    static let flashes: Set<String> = [
        "revoked", "passkey-revoked", "sessions-ended", "session-ended", "unlocked", "pin-unlocked", "cancelled", "operator-created",
        "operator-disabled",
        "payee-registered", "client-disabled", "operator-enabled", "operator-role-changed", "operator-password-reset", "operator-totp-reset",
        "password-changed",
    ]

    /// A form post's fields (`application/x-www-form-urlencoded`), at most 16 KiB.
    static func form(_ request: Request) async throws -> [String: String] {
        var request = request
        let body = try await request.collectBody(upTo: 16_384)
        var components = URLComponents()
        components.percentEncodedQuery = String(buffer: body).replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
        return fields
    }

    /// Whether the request's `Origin` (when a browser sent one) is this server's own.
    func sameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// An id as it may appear in a path we redirect to (ids are UUIDs; anything else is dropped).
    static func pathSafe(_ id: String) -> String {
        String(id.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" }.prefix(64))
    }
}
