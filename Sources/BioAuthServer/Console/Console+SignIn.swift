import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// Signing in and out: the password and TOTP code, the enrollment of a new operator's key, choosing a password.
extension Console {
    /// The sign-in, password and sign-out pages.
    func addSignInRoutes(to router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console/sign-in") { request, _ in console.signInPage(request, name: "", enroll: nil, error: nil, status: .ok) }
        router.post("/console/sign-in") { request, _ in try await console.signIn(request) }
        router.get("/console/password") { request, _ in try await console.passwordPage(request) }
        router.post("/console/password") { request, _ in try await console.setPassword(request) }
        router.post("/console/sign-out") { request, _ in
            try await console.acting(request, allowRestricted: true) { _, _ in
                try await console.sessions.end(request.cookies[ConsoleSessions.cookieName]?.value)
                var response = Self.redirect("/console/sign-in")
                response.headers[.setCookie] = Self.endedSessionCookie
                return response
            }
        }
    }

    func signInPage(
        _ request: Request,
        name: String,
        enroll: (secret: String, uri: String)?,
        error: String?,
        flash: String? = nil,
        status: HTTPResponse.Status
    ) -> Response {
        let language = Self.language(request)
        var view: [String: Any] = ["name": name, "t": language.text]
        if let enroll {
            view["enroll"] = [
                "secret": Self.grouped(enroll.secret), "uri": enroll.uri,
                "qr": QRCode(text: enroll.uri)?.svg(pixelsPerModule: 5, label: language["qrLabel"]) ?? "",
            ]
        }
        let content = templates.render(view, withTemplate: "sign-in") ?? ""
        return page(
            request,
            title: language["signIn"],
            content: content,
            session: nil,
            flash: flash.map { language[$0] },
            error: error.map { language[$0] },
            status: status
        )
    }

    /// A key in groups of four, as people type it (authenticator apps ignore the spaces).
    static func grouped(_ key: String) -> String {
        var groups: [Substring] = []
        var rest = key[...]
        while !rest.isEmpty {
            groups.append(rest.prefix(4))
            rest = rest.dropFirst(4)
        }
        return groups.joined(separator: " ")
    }

    /// The page where an operator chooses their password: at their first sign-in and after an admin reset it (the new
    /// one twice), or when they change it (also the current one and a code).
    func passwordPage(
        _ request: Request,
        error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        let language = Self.language(request)
        let forced = session.operator.mustChangePassword
        let view: [String: Any] = ["t": language.text, "csrf": session.csrfToken, "forced": forced, "name": session.operator.name]
        return page(
            request,
            title: language[forced ? "choosePasswordTitle" : "changePasswordTitle"],
            content: templates.render(view, withTemplate: "password") ?? "",
            session: session,
            error: error.map { language[$0] },
            status: status
        )
    }

    /// Stores the password the operator chose. A new operator then sees the key to enroll (their session ends: they sign
    /// in with the new password and a code); the others go on to the overview.
    func setPassword(_ request: Request) async throws -> Response {
        try await acting(request, allowRestricted: true) { session, form in
            let new = form["new"] ?? ""
            guard new == form["repeat"] ?? "" else {
                return try await passwordPage(request, error: "error.passwordsDiffer", status: .unprocessableContent)
            }
            guard (try? Operators.checkPassword(new)) != nil else {
                return try await passwordPage(request, error: "error.passwordRule", status: .unprocessableContent)
            }
            let operators = Operators(service: serving)
            let token = request.cookies[ConsoleSessions.cookieName]?.value
            do {
                guard session.operator.mustChangePassword else {
                    try await operators.changePassword(
                        operatorID: session.operator.id,
                        current: form["current"] ?? "",
                        code: form["code"] ?? "",
                        newPassword: new,
                        address: RequestScope.current.caller.address,
                        keepingSession: token.map(BioAuthService.tokenHash)
                    )
                    return Self.redirect("/console/overview?done=password-changed")
                }
                let updated = try await operators.choosePassword(
                    operatorID: session.operator.id,
                    newPassword: new,
                    keepingSession: token.map(BioAuthService.tokenHash)
                )
                guard updated.totpEnrolled else {
                    try await sessions.end(token)
                    let shown = try await operators.newEnrollment(updated)
                    var response = signInPage(request, name: updated.name, enroll: shown, error: nil, flash: "done.password-set", status: .ok)
                    response.headers[.setCookie] = Self.endedSessionCookie
                    return response
                }
                return Self.redirect("/console/overview?done=password-changed")
            } catch let error as OperatorError {
                switch error {
                case .locked: return try await passwordPage(request, error: "error.locked", status: .tooManyRequests)
                case .invalidCredentials: return try await passwordPage(request, error: "error.currentCredentials", status: .unauthorized)
                case .invalid: return try await passwordPage(request, error: "error.passwordSame", status: .unprocessableContent)
                case .disabled: return Self.redirect("/console/sign-in")
                }
            }
        }
    }

    /// The cookie that makes the browser forget an ended session.
    static let endedSessionCookie = "\(ConsoleSessions.cookieName)=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Strict"

    /// The signed-in operator's session when they may use the console; otherwise nil and where to send them: the sign-in
    /// page without a session, the password page while they must choose their own password (or have no second factor).
    func signedIn(_ request: Request) async throws -> (session: ConsoleSessions.Session?, elsewhere: Response) {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return (nil, Self.redirect("/console/sign-in"))
        }
        guard !session.isRestricted else { return (nil, Self.redirect("/console/password")) }
        return (session, Self.redirect("/console/overview"))
    }

    /// Sign-in attempts one client address may make per rate-limit window, whatever the names: bounds password guessing
    /// across all operators from one place (each operator's own lock is the other bound).
    static let signInAttemptsPerAddress = 10

    func signIn(_ request: Request) async throws -> Response {
        guard sameOrigin(request) else { return forbidden(request, "error.origin", session: nil) }
        let form = try await Self.form(request)
        let name = form["name"] ?? ""
        let password = form["password"] ?? ""
        do {
            let service = self.service
            try await service.commit { db -> Void in
                try await service.rateLimit(
                    "console-sign-in:" + (RequestScope.current.caller.address ?? "unknown"),
                    name: .consoleSignIn,
                    limit: Self.signInAttemptsPerAddress,
                    window: service.configuration.rateLimitWindow,
                    on: db
                )
            }
        } catch let error as APIError where error.code == .rateLimited {
            return signInPage(request, name: name, enroll: nil, error: "error.rateLimited", status: .tooManyRequests)
        }
        let code = form["code"].flatMap { $0.isEmpty ? nil : $0 }
        let operators = Operators(service: serving)
        do {
            switch try await operators.signIn(name: name, password: password, code: code, address: RequestScope.current.caller.address) {
            case .enrollTOTP(let secret, let uri, let afterWrongCode):
                return signInPage(
                    request,
                    name: name,
                    enroll: (secret, uri),
                    error: afterWrongCode ? "error.enrollCode" : nil,
                    status: afterWrongCode ? .unauthorized : .ok
                )
            case .changePassword(let signedIn):
                // A session that only reaches the password page until the operator has chosen their own.
                let token = try await sessions.start(for: signedIn)
                var response = Self.redirect("/console/password")
                response.headers[.setCookie] = "\(ConsoleSessions.cookieName)=\(token); Path=/; Secure; HttpOnly; SameSite=Strict"
                return response
            case .signedIn(let signedIn):
                let token = try await sessions.start(for: signedIn)
                var response = Self.redirect("/console/overview")
                response.headers[.setCookie] = "\(ConsoleSessions.cookieName)=\(token); Path=/; Secure; HttpOnly; SameSite=Strict"
                return response
            }
        } catch let error as OperatorError {
            let message =
                switch error {
                case .locked: "error.locked"
                default: "error.credentials"
                }
            return signInPage(request, name: name, enroll: nil, error: message, status: .unauthorized)
        }
    }
}
