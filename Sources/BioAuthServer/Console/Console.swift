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

    private var sessions: ConsoleSessions { ConsoleSessions(service: service) }
    private var desk: SupportDesk { SupportDesk(service: service) }

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
        router.post("/console/sign-out") { request, _ in
            try await console.acting(request) { _, _ in
                try await console.sessions.end(request.cookies[ConsoleSessions.cookieName]?.value)
                var response = Self.redirect("/console/sign-in")
                response.headers[.setCookie] = "\(ConsoleSessions.cookieName)=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Strict"
                return response
            }
        }
        router.get("/console/customers") { request, _ in try await console.customers(request) }
        router.get("/console/payments") { request, _ in try await console.payments(request) }
        router.get("/console/admin") { request, _ in try await console.admin(request) }
        router.post("/console/admin/operators") { request, _ in
            try await console.administering(request, done: "operator-created") { session, form in
                let role = OperatorRole(rawValue: form["role"] ?? "") ?? .viewer
                do {
                    _ = try await console.desk.createOperator(
                        name: form["name"] ?? "",
                        role: role,
                        password: form["password"] ?? "",
                        by: session.operator
                    )
                } catch let error as OperatorError {
                    throw SupportError.invalid(error.description)
                }
            }
        }
        router.post("/console/admin/operators/{name}/disable") { request, context in
            let name = try context.parameters.require("name")
            return try await console.administering(request, done: "operator-disabled") { session, _ in
                do {
                    try await console.desk.disableOperator(name: name, by: session.operator)
                } catch let error as OperatorError {
                    throw SupportError.invalid(error.description)
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
        status: HTTPResponse.Status
    ) -> Response {
        let language = Self.language(request)
        var view: [String: Any] = ["name": name, "t": language.text]
        if let enroll { view["enroll"] = ["secret": enroll.secret, "uri": enroll.uri] }
        let content = templates.render(view, withTemplate: "sign-in") ?? ""
        return page(request, title: language["signIn"], content: content, session: nil, error: error.map { language[$0] }, status: status)
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
                    "console-sign-in:" + (ClientAddress.current ?? "unknown"),
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
        let operators = Operators(service: service)
        do {
            switch try await operators.signIn(name: name, password: password, code: code, address: ClientAddress.current) {
            case .enrollTOTP(let secret, let uri):
                return signInPage(request, name: name, enroll: (secret, uri), error: nil, status: .ok)
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

    private func customers(_ request: Request) async throws -> Response {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        let query = request.uri.queryParameters.get("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        if !query.isEmpty {
            do {
                // Only the id is needed here; the customer's page loads the rest.
                return Self.redirect("/console/customers/\(Self.pathSafe(try await desk.accountID(query)))")
            } catch is SupportError {
                let content = templates.render(["query": query, "notFound": true, "t": Self.language(request).text], withTemplate: "customers") ?? ""
                return page(request, title: Self.language(request)["customers"], content: content, session: session, status: .notFound)
            }
        }
        let content = templates.render(["query": "", "t": Self.language(request).text], withTemplate: "customers") ?? ""
        return page(request, title: Self.language(request)["customers"], content: content, session: session)
    }

    /// Operators, payees and service clients, for admins.
    private func admin(_ request: Request) async throws -> Response {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        guard session.operator.role == .admin else { return forbidden(request, "error.admin", session: session) }
        let language = Self.language(request)
        let time = { (date: Date) in (try? InternetDateTime().encode(date)) ?? "–" }
        let operators = try await Operators(service: service).list()
        let payees = try await PayeeRegistry(database: service.database, clock: service.clock).list()
        let clients = try await ServiceClients(database: service.database, clock: service.clock, random: service.random).list()
        let view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken,
            "operators": operators.map { item -> [String: Any] in
                [
                    "id": item.id, "name": item.name, "role": item.role.rawValue, "createdAt": time(item.createdAt),
                    "state": item.disabledAt != nil ? language["disabled"] : item.totpEnrolled ? language["active"] : language["totpPending"],
                    "canDisable": item.disabledAt == nil && item.name != session.operator.name,
                ]
            },
            "payees": payees.map { ["id": $0.id, "name": $0.name, "verification": $0.verification.rawValue, "registeredBy": $0.registeredBy] },
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
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        let language = Self.language(request)
        let overview = try await desk.overview(hours: 24)
        let view: [String: Any] = [
            "t": language.text, "chart": Self.chart(overview, language: language),
            "biometric": overview.hours.map(\.biometric).reduce(0, +), "passkey": overview.hours.map(\.passkey).reduce(0, +),
            "password": overview.hours.map(\.password).reduce(0, +),
            "failures": overview.hours.map(\.failures).reduce(0, +),
            "codes": overview.failuresByCode.map { ["code": $0.code, "count": $0.count] },
        ]
        return page(request, title: language["overview"], content: templates.render(view, withTemplate: "overview") ?? "", session: session)
    }

    /// The hours as an SVG bar chart, four bars an hour (device key, passkey, password, failed), drawn here from numbers only: no
    /// script, no style attribute (the CSP allows neither inline), every text escaped.
    static func chart(_ overview: SupportDesk.Overview, language: ConsoleLanguage) -> String {
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
                let label = hourLabel(hour.start)
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

    private static func hourLabel(_ date: Date) -> String {
        let hour = Int(date.timeIntervalSince1970 / 3600) % 24
        return String(format: "%02d:00", hour)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func payments(_ request: Request) async throws -> Response {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        let language = Self.language(request)
        let query = request.uri.queryParameters
        let given = { (name: String) -> String in query.get(name)?.trimmingCharacters(in: .whitespaces) ?? "" }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        var view: [String: Any] = [
            "t": language.text, "payee": given("payee"), "from": given("from"), "until": given("until"), "min": given("min"), "max": given("max"),
            "statuses": ["pending", "authorized", "cancelled", "expired", "locked"].map { ["value": $0, "selected": $0 == given("status")] },
        ]
        var error: String?
        var search = SupportDesk.PaymentSearch(status: given("status").isEmpty ? nil : given("status"), payee: given("payee"))
        for (name, apply) in [
            ("from", { (text: String) -> Bool in day.date(from: text).map { search.from = $0 } != nil }),
            ("until", { (text: String) -> Bool in day.date(from: text).map { search.until = $0 } != nil }),
            ("min", { (text: String) -> Bool in Int64(text).map { search.minAmountMinor = $0 } != nil }),
            ("max", { (text: String) -> Bool in Int64(text).map { search.maxAmountMinor = $0 } != nil }),
        ] where !given(name).isEmpty && !apply(given(name)) {
            error = "\(language["error.search"]) \(name)"
        }
        if error == nil {
            do {
                let time = { (date: Date) in (try? InternetDateTime().encode(date)) ?? "–" }
                view["results"] = try await desk.payments(search).map { found -> [String: Any] in
                    [
                        "id": found.payment.id, "accountID": found.accountID, "username": found.username,
                        "amount": found.payment.amount.map { "\($0.decimalString) \($0.currency.code)" } ?? "?",
                        "payeeName": found.payment.payeeName, "payeeID": found.payment.payeeID, "status": found.payment.status,
                        "createdAt": time(found.payment.createdAt),
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
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
        let record: CustomerRecord
        do {
            record = try await desk.customer(account)
        } catch is SupportError {
            let language = Self.language(request)
            return page(request, title: language["notFound"], content: "<h1>\(language["notFound"])</h1>", session: session, status: .notFound)
        }
        let canAct = session.operator.role != .viewer
        let language = Self.language(request)
        let time = { (date: Date?) in date.flatMap { try? InternetDateTime().encode($0) } ?? "–" }
        var view: [String: Any] = [
            "username": record.username, "accountID": record.accountID, "createdAt": time(record.createdAt), "csrf": session.csrfToken,
            "canAct": canAct, "hasSessions": !record.sessions.isEmpty, "t": language.text,
            "devices": record.devices.map { device -> [String: Any] in
                [
                    "id": device.id, "name": device.name, "biometryKind": device.biometryKind,
                    "attested": language[device.attestation == "apple-appattest" ? "yes" : "no"], "createdAt": time(device.createdAt),
                    "lastUsedAt": time(device.lastUsedAt),
                    "state": device.revokedAt.map { "\(language["revoked"]) \(time($0))" } ?? language["active"],
                    "canRevoke": canAct && device.revokedAt == nil,
                ]
            },
            "passkeys": record.passkeys.map { passkey -> [String: Any] in
                [
                    "id": passkey.id, "name": passkey.name, "kind": language[passkey.backupEligible ? "passkeySynced" : "passkeyDeviceBound"],
                    "attestation": passkey.attestationFormat + (passkey.attestationTrusted ? " ✓" : ""), "createdAt": time(passkey.createdAt),
                    "lastUsedAt": time(passkey.lastUsedAt),
                    "state": passkey.revokedAt.map { "\(language["revoked"]) \(time($0))" } ?? language["active"],
                    "canRevoke": canAct && passkey.revokedAt == nil,
                ]
            },
            "sessions": record.sessions.map { session -> [String: Any] in
                ["id": session.id, "method": session.method, "installationID": session.installationID, "createdAt": time(session.createdAt)]
            },
            "payments": record.payments.map { payment -> [String: Any] in
                [
                    "id": payment.id, "amount": payment.amount.map { "\($0.decimalString) \($0.currency.code)" } ?? "?",
                    "payeeName": payment.payeeName,
                    "payeeID": payment.payeeID, "status": payment.status, "createdAt": time(payment.createdAt),
                    "canCancel": canAct && payment.status == "pending",
                ]
            },
            "events": record.events.map { event -> [String: Any] in
                var row: [String: Any] = [
                    "occurredAt": time(event.occurredAt), "kind": event.kind, "outcome": event.succeeded ? "success" : (event.code ?? "failure"),
                    "reason": event.reason ?? "",
                ]
                if let id = event.operatorID { row["operatorID"] = id }
                return row
            },
        ]
        // Absent values are left out: the templates' sections test for presence.
        if let until = record.lockedUntil { view["lockedUntil"] = time(until) }
        if let until = record.pinLockedUntil { view["pinLockedUntil"] = time(until) }
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(request, title: record.username, content: templates.render(view, withTemplate: "customer") ?? "", session: session, flash: flash)
    }

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

    /// Runs `body` for a form post of a signed-in operator whose CSRF token and origin are right; 403 otherwise.
    private func acting(_ request: Request, _ body: (ConsoleSessions.Session, [String: String]) async throws -> Response) async throws -> Response {
        guard let session = try await sessions.session(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect("/console/sign-in")
        }
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
            view["operator"] = ["name": session.operator.name, "role": session.operator.role.rawValue, "csrf": session.csrfToken]
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

    /// The page for an action the desk refused, saying why.
    private func notDone(_ request: Request, _ error: SupportError, session: ConsoleSessions.Session) -> Response {
        let language = Self.language(request)
        return page(
            request,
            title: language["notDone"],
            content: "<h1>\(language["notDone"])</h1>",
            session: session,
            error: error.description,
            status: .unprocessableContent
        )
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
        "payee-registered",
        "client-disabled",
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
