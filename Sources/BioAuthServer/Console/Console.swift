import BioAuthCore
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The operator console: server-rendered HTML under `/console` (off unless ``ServerConfiguration/consoleEnabled``), no
/// JavaScript. Operators sign in with a password and a TOTP code (``Operators``), find a customer and act for them
/// through ``SupportDesk``, each action with a reason.
///
/// Every response carries a strict Content-Security-Policy (no script at all, styles from the console only), refuses
/// framing and caching; every form that changes something carries the session's CSRF token, and a request whose
/// `Origin` is another site is refused. Roles are checked on the server for every request. Text is HTML-escaped by the
/// templates (`{{…}}`), so a name like `<script>` shows as text.
struct Console: Sendable {
    let service: BioAuthService
    let templates: MustacheLibrary
    let stylesheet: ByteBuffer

    /// The service working for the request being served: what a page's action audits records its caller.
    private var serving: BioAuthService { service.serving(RequestScope.current.caller) }
    private var sessions: ConsoleSessions { ConsoleSessions(service: serving) }
    private var desk: SupportDesk { SupportDesk(service: serving) }

    /// Loads the templates bundled with the server.
    static func load(service: BioAuthService) async throws -> Console {
        guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw ConfigurationError(message: "the console's templates are missing from the build")
        }
        let templates = try await MustacheLibrary(directory: folder.path)
        let css = try Data(contentsOf: folder.appendingPathComponent("console.css"))
        return Console(service: service, templates: templates, stylesheet: ByteBuffer(bytes: css))
    }

    /// Adds the console's routes.
    func register(on router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console") { _, _ in Self.redirect("/console/overview") }
        router.get("/console/overview") { request, _ in try await console.overview(request) }
        router.get("/console/static/console.css") { _, _ in
            var headers = Self.securityHeaders
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "public, max-age=3600"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: console.stylesheet))
        }
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
        router.get("/console/customers") { request, _ in try await console.customers(request) }
        router.get("/console/payments") { request, _ in try await console.payments(request) }
        router.get("/console/admin") { request, _ in try await console.admin(request) }
        router.post("/console/admin/operators") { request, _ in
            try await console.administering(request, done: "operator-created") { session, form in
                let role = OperatorRole(rawValue: form["role"] ?? "") ?? .viewer
                _ = try await console.desk.createOperator(
                    name: form["name"] ?? "",
                    role: role,
                    password: form["password"] ?? "",
                    by: session.operator
                )
            }
        }
        // An admin's changes of another operator: the name from the path, the reason (and what else) from the form.
        let operatorActions: [(path: String, done: String, act: @Sendable (SupportDesk, String, [String: String], Operator) async throws -> Void)] = [
            ("disable", "operator-disabled", { try await $0.disableOperator(name: $1, reason: $2["reason"] ?? "", by: $3) }),
            ("enable", "operator-enabled", { try await $0.enableOperator(name: $1, reason: $2["reason"] ?? "", by: $3) }),
            (
                "role", "operator-role-changed",
                { desk, name, form, admin in
                    guard let role = OperatorRole(rawValue: form["role"] ?? "") else {
                        throw SupportError.invalid("the role is viewer, support or admin")
                    }
                    try await desk.changeOperatorRole(name: name, to: role, reason: form["reason"] ?? "", by: admin)
                }
            ),
            (
                "reset-password", "operator-password-reset",
                { try await $0.resetOperatorPassword(name: $1, temporaryPassword: $2["password"] ?? "", reason: $2["reason"] ?? "", by: $3) }
            ),
            ("reset-totp", "operator-totp-reset", { try await $0.resetOperatorTOTP(name: $1, reason: $2["reason"] ?? "", by: $3) }),
        ]
        for action in operatorActions {
            router.post(RouterPath("/console/admin/operators/{name}/\(action.path)")) { request, context in
                let name = try context.parameters.require("name")
                return try await console.administering(request, done: action.done) { session, form in
                    try await action.act(console.desk, name, form, session.operator)
                }
            }
        }
        router.post("/console/admin/service-clients/{client}/disable") { request, context in
            let client = try context.parameters.require("client")
            return try await console.administering(request, done: "client-disabled") { session, _ in
                try await console.desk.disableServiceClient(client, by: session.operator)
            }
        }
        router.post("/console/admin/payees") { request, _ in
            try await console.administering(request, done: "payee-registered") { session, form in
                try await console.desk.registerPayee(
                    id: form["payeeId"] ?? "",
                    name: form["name"] ?? "",
                    verified: form["unverified"] == nil,
                    by: session.operator
                )
            }
        }
        router.get("/console/customers/{account}") { request, context in
            try await console.customer(request, account: try context.parameters.require("account"))
        }
        router.get("/console/customers/{account}/payments/{payment}") { request, context in
            try await console.paymentPage(
                request,
                account: try context.parameters.require("account"),
                payment: try context.parameters.require("payment")
            )
        }
        router.post("/console/customers/{account}/devices/{device}/revoke") { request, context in
            let account = try context.parameters.require("account")
            let device = try context.parameters.require("device")
            return try await console.act(request, account: account, done: "revoked") { name, reason in
                try await console.desk.revokeDevice(device, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/passkeys/{passkey}/revoke") { request, context in
            let account = try context.parameters.require("account")
            let passkey = try context.parameters.require("passkey")
            return try await console.act(request, account: account, done: "passkey-revoked") { name, reason in
                try await console.desk.revokePasskey(passkey, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/end-sessions") { request, context in
            let account = try context.parameters.require("account")
            return try await console.act(request, account: account, done: "sessions-ended") { name, reason in
                try await console.desk.endSessions(customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/unlock") { request, context in
            let account = try context.parameters.require("account")
            return try await console.act(request, account: account, done: "unlocked") { name, reason in
                try await console.desk.unlockAccount(customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/clear-pin-lock") { request, context in
            let account = try context.parameters.require("account")
            return try await console.act(request, account: account, done: "pin-unlocked") { name, reason in
                try await console.desk.clearPINLock(customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/payments/{payment}/cancel") { request, context in
            let account = try context.parameters.require("account")
            let payment = try context.parameters.require("payment")
            return try await console.act(request, account: account, done: "cancelled") { name, reason in
                try await console.desk.cancelPayment(payment, customer: account, operator: name, reason: reason)
            }
        }
    }

    // MARK: Pages

    private func signInPage(
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
    private func passwordPage(
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
    private func setPassword(_ request: Request) async throws -> Response {
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
    private func signedIn(_ request: Request) async throws -> (session: ConsoleSessions.Session?, elsewhere: Response) {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return (nil, Self.redirect("/console/sign-in"))
        }
        guard !session.isRestricted else { return (nil, Self.redirect("/console/password")) }
        return (session, Self.redirect("/console/overview"))
    }

    /// Sign-in attempts one client address may make per rate-limit window, whatever the names: bounds password guessing
    /// across all operators from one place (each operator's own lock is the other bound).
    static let signInAttemptsPerAddress = 10

    private func signIn(_ request: Request) async throws -> Response {
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

    /// The customer search: an id a customer reads out opens its customer (a payment id, the payment); the start of a
    /// username in any case lists the customers it matches, or opens the one that is exactly it.
    private func customers(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let query = request.uri.queryParameters.get("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        var view: [String: Any] = ["query": query, "t": language.text]
        if !query.isEmpty {
            switch try? await desk.search(query) {
            case .id(let kind, let id, let accountID):
                let customer = "/console/customers/\(Self.pathSafe(accountID))"
                return Self.redirect(kind == "payment" ? "\(customer)/payments/\(Self.pathSafe(id))" : customer)
            case .usernames(let matches) where matches.count == 1 && matches[0].username == query.lowercased():
                return Self.redirect("/console/customers/\(Self.pathSafe(matches[0].accountID))")
            case .usernames(let matches) where !matches.isEmpty:
                view["hasMatches"] = true
                view["matches"] = matches.map { ["accountID": $0.accountID, "username": $0.username] }
            default:
                view["notFound"] = true
                let content = templates.render(view, withTemplate: "customers") ?? ""
                return page(request, title: language["customers"], content: content, session: session, status: .notFound)
            }
        }
        let content = templates.render(view, withTemplate: "customers") ?? ""
        return page(request, title: language["customers"], content: content, session: session)
    }

    /// Operators, payees and service clients, for admins.
    private func admin(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        guard session.operator.role == .admin else { return forbidden(request, "error.admin", session: session) }
        let language = Self.language(request)
        let clock = consoleTime(request)
        let operators = try await Operators(service: service).list()
        let names = Dictionary(operators.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let payees = try await PayeeRegistry(database: service.database, clock: service.clock).list()
        let clients = try await ServiceClients(database: service.database, clock: service.clock, random: service.random).list()
        let roles = OperatorRole.allCases.map(\.rawValue)
        let view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken,
            "newRoles": roles.map { ["value": $0, "label": language.word("role", $0)] },
            "operators": operators.map { item -> [String: Any] in
                let state =
                    item.disabledAt != nil
                    ? "disabled" : item.mustChangePassword ? "passwordNotChosen" : item.totpEnrolled ? "active" : "totpPending"
                return [
                    "id": item.id, "name": item.name, "role": language.word("role", item.role.rawValue), "createdAt": clock.format(item.createdAt),
                    "state": language[state], "disabled": item.disabledAt != nil, "isSelf": item.id == session.operator.id,
                    "roles": roles.map { ["value": $0, "label": language.word("role", $0), "selected": $0 == item.role.rawValue] },
                ]
            },
            "changes": try await desk.operatorChanges(limit: 50).map { change -> [String: Any] in
                [
                    "occurredAt": clock.format(change.occurredAt), "kind": language.word("kind", change.kind),
                    "by": names[change.operatorID] ?? change.operatorID, "details": change.reason,
                ]
            },
            "payees": payees.map {
                [
                    "id": $0.id, "name": $0.name, "verification": language.word("verification", $0.verification.rawValue),
                    "registeredBy": names[$0.registeredBy] ?? $0.registeredBy,
                ]
            },
            "clients": clients.map { client -> [String: Any] in
                [
                    "id": client.id, "name": client.name, "scopes": client.scopes.joined(separator: " "),
                    "state": client.disabledAt != nil ? language["disabled"] : language["active"], "canDisable": client.disabledAt == nil,
                ]
            },
            "endpoints": try await desk.webhookEndpoints().map { endpoint -> [String: Any] in
                ["id": endpoint.id, "clientID": endpoint.clientID, "url": endpoint.url, "events": endpoint.events.joined(separator: " ")]
            },
        ]
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(
            request,
            title: language["administration"],
            content: templates.render(view, withTemplate: "admin") ?? "",
            session: session,
            flash: flash
        )
    }

    /// An admin's form post: session, origin, CSRF token and the admin role checked, then `body`; back to the admin page.
    private func administering(
        _ request: Request,
        done: String,
        _ body: @Sendable (ConsoleSessions.Session, [String: String]) async throws -> Void
    ) async throws -> Response {
        try await acting(request) { session, form in
            guard session.operator.role == .admin else { return forbidden(request, "error.admin", session: session) }
            do {
                try await body(session, form)
            } catch let error as SupportError {
                return notDone(request, error, session: session)
            }
            return Self.redirect("/console/admin?done=\(done)")
        }
    }

    private func overview(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let clock = consoleTime(request)
        let overview = try await desk.overview(hours: 24, timeZone: clock.timeZone)
        let view: [String: Any] = [
            "t": language.text, "chart": Self.chart(overview, language: language, time: clock), "zone": clock.zoneName,
            "biometric": overview.hours.map(\.biometric).reduce(0, +), "passkey": overview.hours.map(\.passkey).reduce(0, +),
            "password": overview.hours.map(\.password).reduce(0, +),
            "failures": overview.hours.map(\.failures).reduce(0, +),
            "codes": overview.failuresByCode.map { ["code": $0.code, "count": $0.count] },
        ]
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(
            request,
            title: language["overview"],
            content: templates.render(view, withTemplate: "overview") ?? "",
            session: session,
            flash: flash
        )
    }

    /// The hours as an SVG bar chart, four bars an hour (device key, passkey, password, failed), drawn here from numbers only: no
    /// script, no style attribute (the CSP allows neither inline), every text escaped.
    static func chart(_ overview: SupportDesk.Overview, language: ConsoleLanguage, time: ConsoleTime) -> String {
        let width = 960
        let height = 260
        let left = 40
        let bottom = 30
        let top = 30
        let plot = Double(height - bottom - top)
        let highest = max(1, overview.hours.map { max($0.biometric, $0.passkey, $0.password, $0.failures) }.max() ?? 1)
        let slot = Double(width - left - 10) / Double(max(overview.hours.count, 1))
        let bar = max(1, slot / 5)
        let colors = ["#1d4ed8", "#0f766e", "#64748b", "#b91c1c"]
        var svg =
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(width) \##(height)" width="100%" role="img" aria-label="\##(escape(language["signInsByHour"]))">"##
        svg += ##"<line x1="\##(left)" y1="\##(height - bottom)" x2="\##(width - 10)" y2="\##(height - bottom)" stroke="#94a3b8"/>"##
        svg += ##"<text x="\##(left - 6)" y="\##(top + 4)" text-anchor="end" font-size="11" fill="#475569">\##(highest)</text>"##
        svg += ##"<text x="\##(left - 6)" y="\##(height - bottom)" text-anchor="end" font-size="11" fill="#475569">0</text>"##
        for (index, hour) in overview.hours.enumerated() {
            let x = Double(left) + Double(index) * slot + bar / 2
            for (series, value) in [hour.biometric, hour.passkey, hour.password, hour.failures].enumerated() where value > 0 {
                let h = plot * Double(value) / Double(highest)
                svg +=
                    ##"<rect x="\##(format(x + Double(series) * bar))" y="\##(format(Double(height - bottom) - h))" width="\##(format(bar))" height="\##(format(h))" fill="\##(colors[series])"><title>\##(value)</title></rect>"##
            }
            if index % 3 == 0 {
                let label = time.hour(hour.start)
                svg +=
                    ##"<text x="\##(format(x + bar))" y="\##(height - bottom + 16)" text-anchor="middle" font-size="11" fill="#475569">\##(label)</text>"##
            }
        }
        for (series, key) in ["biometricLegend", "passkeyLegend", "passwordLegend", "failuresLegend"].enumerated() {
            let x = left + series * 220
            svg += ##"<rect x="\##(x)" y="8" width="12" height="12" fill="\##(colors[series])"/>"##
            svg += ##"<text x="\##(x + 18)" y="18" font-size="12" fill="#1d2330">\##(escape(language[key]))</text>"##
        }
        return svg + "</svg>"
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The payments search: a payment id opens the payment; otherwise the filters (amounts in major units of the chosen
    /// currency, dates in the console's time zone).
    private func payments(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let clock = consoleTime(request)
        let query = request.uri.queryParameters
        let given = { (name: String) -> String in query.get(name)?.trimmingCharacters(in: .whitespaces) ?? "" }
        if !given("id").isEmpty {
            if case .id("payment", let id, let accountID) = try? await desk.search(given("id")) {
                return Self.redirect("/console/customers/\(Self.pathSafe(accountID))/payments/\(Self.pathSafe(id))")
            }
            let content = templates.render(["t": language.text, "id": given("id"), "currencies": [] as [Any]], withTemplate: "payments") ?? ""
            return page(
                request,
                title: language["paymentSearch"],
                content: content,
                session: session,
                error: language["noPayment"],
                status: .notFound
            )
        }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = clock.timeZone
        day.dateFormat = "yyyy-MM-dd"
        let currency = Currency(code: given("currency").isEmpty ? "CNY" : given("currency")) ?? .cny
        var view: [String: Any] = [
            "t": language.text, "payee": given("payee"), "from": given("from"), "until": given("until"), "min": given("min"), "max": given("max"),
            "statuses": ["pending", "authorized", "cancelled", "expired", "locked"].map {
                ["value": $0, "label": language.word("status", $0), "selected": $0 == given("status")]
            },
            "currencies": Currency.all.map { ["code": $0.code, "selected": $0 == currency] },
        ]
        var error: String?
        var search = SupportDesk.PaymentSearch(status: given("status").isEmpty ? nil : given("status"), payee: given("payee"))
        for (name, apply) in [
            ("from", { (text: String) -> Bool in day.date(from: text).map { search.from = $0 } != nil }),
            ("until", { (text: String) -> Bool in day.date(from: text).map { search.until = $0 } != nil }),
            (
                "min",
                { (text: String) -> Bool in Money(decimalString: text, currency: currency).map { search.minAmountMinor = $0.minorUnits } != nil }
            ),
            (
                "max",
                { (text: String) -> Bool in Money(decimalString: text, currency: currency).map { search.maxAmountMinor = $0.minorUnits } != nil }
            ),
        ] where !given(name).isEmpty && !apply(given(name)) {
            error = "\(language["error.search"]) \(language["field.\(name)"])"
        }
        if search.minAmountMinor != nil || search.maxAmountMinor != nil { search.currency = currency.code }
        if error == nil {
            do {
                view["results"] = try await desk.payments(search).map { found -> [String: Any] in
                    [
                        "id": found.payment.id, "accountID": found.accountID, "username": found.username,
                        "amount": Self.amount(found.payment.amount), "payeeName": found.payment.payeeName, "payeeID": found.payment.payeeID,
                        "status": language.word("status", found.payment.status), "createdAt": clock.format(found.payment.createdAt),
                    ]
                }
            } catch let refused as SupportError {
                error = "\(language["error.search"]) \(refused.description)"
            }
        }
        let content = templates.render(view, withTemplate: "payments") ?? ""
        return page(
            request,
            title: language["paymentSearch"],
            content: content,
            session: session,
            error: error,
            status: error == nil ? .ok : .badRequest
        )
    }

    private func customer(_ request: Request, account: String) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let record: CustomerRecord
        do {
            record = try await desk.customer(account)
        } catch is SupportError {
            return page(request, title: language["notFound"], content: "<h1>\(language["notFound"])</h1>", session: session, status: .notFound)
        }
        let canAct = session.operator.role != .viewer
        let clock = consoleTime(request)
        let operators = try await operatorNames()
        let deviceNames = Dictionary(record.devices.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let passkeyNames = Dictionary(record.passkeys.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let payments = Dictionary(record.payments.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var view: [String: Any] = [
            "username": record.username, "accountID": record.accountID, "createdAt": clock.format(record.createdAt), "csrf": session.csrfToken,
            "canAct": canAct, "hasSessions": !record.sessions.isEmpty, "t": language.text,
            "devices": record.devices.map { device -> [String: Any] in
                [
                    "id": device.id, "name": device.name, "biometryKind": language.word("biometry", device.biometryKind),
                    "attested": language[device.attestation == "apple-appattest" ? "yes" : "no"], "createdAt": clock.format(device.createdAt),
                    "lastUsedAt": clock.format(device.lastUsedAt),
                    "state": device.revokedAt.map { "\(language["revoked"]) \(clock.format($0))" } ?? language["active"],
                    "canRevoke": canAct && device.revokedAt == nil,
                ]
            },
            "passkeys": record.passkeys.map { passkey -> [String: Any] in
                [
                    "id": passkey.id, "name": passkey.name, "kind": language[passkey.backupEligible ? "passkeySynced" : "passkeyDeviceBound"],
                    "attestation": passkey.attestationFormat + (passkey.attestationTrusted ? " ✓" : ""), "createdAt": clock.format(passkey.createdAt),
                    "lastUsedAt": clock.format(passkey.lastUsedAt),
                    "state": passkey.revokedAt.map { "\(language["revoked"]) \(clock.format($0))" } ?? language["active"],
                    "canRevoke": canAct && passkey.revokedAt == nil,
                ]
            },
            "sessions": record.sessions.map { session -> [String: Any] in
                [
                    "id": session.id, "method": language.word("method", session.method), "installationID": session.installationID,
                    "createdAt": clock.format(session.createdAt),
                ]
            },
            "payments": record.payments.map { payment -> [String: Any] in
                [
                    "id": payment.id, "amount": Self.amount(payment.amount), "payeeName": payment.payeeName, "payeeID": payment.payeeID,
                    "status": language.word("status", payment.status), "createdAt": clock.format(payment.createdAt),
                    "canCancel": canAct && payment.status == "pending",
                ]
            },
            "approvals": record.approvals.map { approval -> [String: Any] in
                // What the phone showed: the operation's message, or where the sign-in came from.
                let channel = [approval.channel.browser, approval.channel.platform, approval.channel.address].filter { !$0.isEmpty }
                var outcome = language.word("approval", approval.status)
                if let reason = approval.denyReason { outcome += " (\(language.word("denyReason", reason)))" }
                if let device = approval.deviceID { outcome += " · \(language["device"]) \(deviceNames[device] ?? device)" }
                return [
                    "id": approval.id, "kind": language.word("approvalKind", approval.kind), "requester": approval.requester,
                    "what": approval.bindingMessage ?? (channel.isEmpty ? "–" : channel.joined(separator: " · ")), "outcome": outcome,
                    "createdAt": clock.format(approval.createdAt), "answeredAt": clock.format(approval.answeredAt),
                ]
            },
            "events": record.events.map { event -> [String: Any] in
                // What the event concerns, by the name the customer knows it by.
                var concerns: [String] = []
                if let id = event.deviceID { concerns.append("\(language["device"]) \(deviceNames[id] ?? id)") }
                if let id = event.passkeyID { concerns.append("\(language["passkey"]) \(passkeyNames[id] ?? id)") }
                if let id = event.paymentID {
                    concerns.append(
                        payments[id].map { "\(language["payment"]) \(Self.amount($0.amount)) → \($0.payeeName)" } ?? "\(language["payment"]) \(id)"
                    )
                }
                var row: [String: Any] = [
                    "occurredAt": clock.format(event.occurredAt), "kind": language.word("kind", event.kind),
                    "outcome": event.succeeded ? language.word("outcome", "success") : (event.code ?? language.word("outcome", "failure")),
                    "reason": event.reason ?? "", "concerns": concerns.joined(separator: "; "),
                ]
                if let id = event.operatorID { row["operatorName"] = operators[id] ?? id }
                if let address = event.clientAddress { row["address"] = address }
                if let agent = event.userAgent { row["userAgent"] = agent }
                return row
            },
        ]
        // Absent values are left out: the templates' sections test for presence.
        if let until = record.lockedUntil { view["lockedUntil"] = clock.format(until) }
        if let until = record.pinLockedUntil { view["pinLockedUntil"] = clock.format(until) }
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(request, title: record.username, content: templates.render(view, withTemplate: "customer") ?? "", session: session, flash: flash)
    }

    /// A payment's page: what it is, who asked for it, each attempt, who authorized it, its receipt checked, and the
    /// webhook deliveries of its events.
    private func paymentPage(_ request: Request, account: String, payment paymentID: String) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let record: SupportDesk.PaymentRecord
        do {
            record = try await desk.payment(paymentID, customer: account)
        } catch is SupportError {
            return page(request, title: language["notFound"], content: "<h1>\(language["noPayment"])</h1>", session: session, status: .notFound)
        }
        let clock = consoleTime(request)
        let operators = try await operatorNames()
        let devices = try await desk.customer(record.accountID).devices
        let deviceName = { (id: String) in devices.first { $0.id == id }.map { "\($0.name) (\(language.word("biometry", $0.biometryKind)))" } ?? id }
        let payment = record.payment
        var view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken, "id": payment.id, "accountID": record.accountID, "username": record.username,
            "amount": Self.amount(payment.amount), "payeeName": payment.payeeName, "payeeID": payment.payeeID,
            "payeeVerified": record.payeeVerified.map { language.word("verification", $0 ? "verified" : "unverified") } ?? language["unknown"],
            "status": language.word("status", payment.status), "createdAt": clock.format(payment.createdAt),
            "expiresAt": clock.format(record.expiresAt), "failedAttempts": record.failedAttempts,
            "canCancel": session.operator.role != .viewer && payment.status == "pending",
            "steps": record.steps.map { step -> [String: Any] in
                var who: [String] = []
                if let client = step.clientID { who.append("\(language["serviceClientShort"]) \(client)") }
                if let device = step.deviceID { who.append("\(language["device"]) \(deviceName(device))") }
                if let id = step.operatorID { who.append("\(operators[id] ?? id): \(step.reason ?? "")") }
                if step.kind == "payment_created", step.clientID == nil { who.append(language["theCustomer"]) }
                return [
                    "occurredAt": clock.format(step.occurredAt),
                    "kind": step.kind == "payment_authorized" && !step.succeeded ? language["failedAttempt"] : language.word("kind", step.kind),
                    "outcome": step.succeeded ? language.word("outcome", "success") : (step.code ?? language.word("outcome", "failure")),
                    "who": who.joined(separator: "; "),
                ]
            },
            "challenges": record.challenges.map { challenge -> [String: Any] in
                [
                    "id": challenge.id, "device": challenge.deviceID.map(deviceName) ?? "–", "createdAt": clock.format(challenge.createdAt),
                    "expiresAt": clock.format(challenge.expiresAt),
                    "used": challenge.consumedAt.map(clock.format)
                        ?? language[challenge.expiresAt < clock.now ? "challengeExpired" : "challengeOpen"],
                ]
            },
            "deliveries": record.deliveries.map { delivery -> [String: Any] in
                [
                    "eventType": delivery.eventType, "endpointID": delivery.endpointID, "status": language.word("delivery", delivery.status),
                    "attempts": delivery.attempts, "lastStatus": delivery.lastStatusCode.map { "HTTP \($0)" } ?? "–",
                    "deliveredAt": clock.format(delivery.deliveredAt),
                ]
            },
        ]
        if let memo = record.memo { view["memo"] = memo }
        if let method = record.authorizationMethod {
            view["authorizedBy"] = method == "pin" ? language["byPIN"] : record.deviceID.map(deviceName) ?? language.word("method", method)
        }
        if let receipt = record.receipt {
            view["receipt"] = ["verdict": language[record.receiptVerifies ? "receiptVerifies" : "receiptFails"], "keyId": receipt.keyId]
        }
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(
            request,
            title: "\(language["payment"]) \(Self.amount(payment.amount))",
            content: templates.render(view, withTemplate: "payment") ?? "",
            session: session,
            flash: flash
        )
    }

    /// Every operator's name by id: audit events name operators by id.
    private func operatorNames() async throws -> [String: String] {
        Dictionary(try await Operators(service: service).list().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// An amount in major units with its currency: `88.00 CNY`.
    static func amount(_ money: Money?) -> String { money.map { "\($0.decimalString) \($0.currency.code)" } ?? "?" }

    /// A support action from a form: the session, the CSRF token, the origin and the role are checked, then `body` runs
    /// with the operator's name and the reason; afterwards the customer's page is shown again.
    private func act(
        _ request: Request,
        account: String,
        done: String,
        _ body: @Sendable (String, String) async throws -> Void
    ) async throws -> Response {
        try await acting(request) { session, form in
            guard session.operator.role != .viewer else { return forbidden(request, "error.viewer", session: session) }
            do {
                try await body(session.operator.name, form["reason"] ?? "")
            } catch let error as SupportError {
                return notDone(request, error, session: session)
            }
            return Self.redirect("/console/customers/\(Self.pathSafe(account))?done=\(done)")
        }
    }

    /// Runs `body` for a form post of a signed-in operator whose CSRF token and origin are right; 403 otherwise. Only
    /// signing out and choosing a password are `allowRestricted`: open to an operator who must choose their password.
    private func acting(
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

    // MARK: Responses

    private func page(
        _ request: Request,
        title: String,
        content: String,
        session: ConsoleSessions.Session?,
        flash: String? = nil,
        error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        let language = Self.language(request)
        var view: [String: Any] = ["title": title, "content": content, "t": language.text, "lang": language.rawValue]
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
    private func notDone(_ request: Request, _ error: SupportError, session: ConsoleSessions.Session) -> Response {
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
    private func forbidden(_ request: Request, _ key: String, session: ConsoleSessions.Session?) -> Response {
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
    private func consoleTime(_ request: Request) -> ConsoleTime {
        ConsoleTime(timeZone: service.configuration.consoleTimeZone, language: Self.language(request), now: service.clock.now)
    }

    /// The request's language (``ConsoleLanguage/of(query:cookie:acceptLanguage:)``).
    private static func language(_ request: Request) -> ConsoleLanguage {
        ConsoleLanguage.of(
            query: request.uri.queryParameters.get("lang"),
            cookie: request.cookies[ConsoleLanguage.cookieName]?.value,
            acceptLanguage: request.headers[.acceptLanguage]
        )
    }

    private static func redirect(_ location: String) -> Response {
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
    private static let flashes: Set<String> = [
        "revoked", "passkey-revoked", "sessions-ended", "unlocked", "pin-unlocked", "cancelled", "operator-created", "operator-disabled",
        "payee-registered", "client-disabled", "operator-enabled", "operator-role-changed", "operator-password-reset", "operator-totp-reset",
        "password-changed",
    ]

    // MARK: Requests

    /// A form post's fields (`application/x-www-form-urlencoded`), at most 16 KiB.
    private static func form(_ request: Request) async throws -> [String: String] {
        var request = request
        let body = try await request.collectBody(upTo: 16_384)
        var components = URLComponents()
        components.percentEncodedQuery = String(buffer: body).replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
        return fields
    }

    /// Whether the request's `Origin` (when a browser sent one) is this server's own.
    private func sameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// An id as it may appear in a path we redirect to (ids are UUIDs; anything else is dropped).
    private static func pathSafe(_ id: String) -> String {
        String(id.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" }.prefix(64))
    }
}
