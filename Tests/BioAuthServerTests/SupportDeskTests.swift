import BioAuthCore
import BioAuthTesting
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import BioAuthServer

/// The support actions operators take for a customer who calls: each works as the customer then notices, each is in
/// the customer's own audit log with the operator and the reason, and a viewer can take none of them.
@Suite("Support desk")
struct SupportDeskTests {
    /// Posts the console's sign-in form (`form`, URL-encoded). Console pages are HTML, so the request goes past `API.call`,
    /// which expects problem documents for errors.
    static func consoleSignIn(_ api: API, form: String) async throws -> (status: Int, raw: String) {
        let response = try await api.client.execute(
            uri: "/console/sign-in",
            method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: form)
        )
        return (response.status.code, String(buffer: response.body))
    }

    static func desk(_ api: API) async throws -> SupportDesk {
        let operators = Operators(service: api.service)
        _ = try await operators.create(name: "mei", role: .support, password: "correct horse battery", mustChangePassword: false)
        _ = try await operators.create(name: "vic", role: .viewer, password: "correct horse battery", mustChangePassword: false)
        return try await SupportDesk.open(database: api.database, configuration: api.service.configuration, clock: api.clock)
    }

    @Test(
        "'my phone was stolen': the device is revoked, its biometric sign-in refused, and the customer's audit log says who and why",
        arguments: StorageBackend.available
    )
    func stolenPhone(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let desk = try await Self.desk(api)
            let key = TestKey()
            let (tokens, deviceID) = try await api.enrolled(key)
            let pending = try #require(try await api.createPayment(token: tokens.access)["paymentId"])
            let before = try await desk.customer("alice")
            #expect(before.devices.map(\.id) == [deviceID] && before.devices[0].revokedAt == nil && before.sessions.count == 1)
            #expect(before.payments.map(\.id) == [pending] && before.payments[0].amount == Money(minorUnits: 8800, currency: .cny))
            #expect(try await desk.customer(before.accountID).username == "alice", "found by account id too")

            let snapshot = try await api.snapshot()
            await #expect(throws: SupportError.notAllowed("vic is a viewer: viewers only read")) {
                try await desk.revokeDevice(deviceID, customer: "alice", operator: "vic", reason: "Phone stolen")
            }
            await #expect(throws: SupportError.self, "a reason is required") {
                try await desk.revokeDevice(deviceID, customer: "alice", operator: "mei", reason: "  ")
            }
            await #expect(throws: SupportError.self, "an unknown operator") {
                try await desk.revokeDevice(deviceID, customer: "alice", operator: "eve", reason: "Phone stolen")
            }
            await #expect(throws: SupportError.notFound("the customer has no device 01a2aaaa-0000-7000-8000-000000000000")) {
                try await desk.revokeDevice("01a2aaaa-0000-7000-8000-000000000000", customer: "alice", operator: "mei", reason: "Phone stolen")
            }
            #expect(try await api.snapshot() == snapshot, "a refused action changes nothing")

            try await desk.revokeDevice(deviceID, customer: "alice", operator: "mei", reason: "Phone reported stolen on call 4711")
            let refused = try await api.call(.post, "/v1/sessions/biometric/challenges", json: ["keyId": key.keyID])
            #expect(refused.code == "device_revoked", "the phone's Face ID sign-in is refused: \(refused.raw)")
            #expect(try await api.call(.get, "/v1/me", token: tokens.access).code == "session_ended", "the phone's session ended")

            let fresh = try await api.signIn()
            let audit = try await api.call(.get, "/v1/audit", token: fresh.access)
            let revoked = try #require((audit.json["events"] as? [[String: Any]])?.first { $0["kind"] as? String == "device_revoked" })
            #expect(
                (revoked["operatorId"] as? String)?.hasPrefix("op_") == true && revoked["reason"] as? String == "Phone reported stolen on call 4711"
            )
            let after = try await desk.customer("alice")
            #expect(after.devices[0].revokedAt != nil && after.events.contains { $0.kind == "device_revoked" && $0.reason != nil })
            await desk.close()
        }
    }

    @Test(
        "an action names the customer: another customer's device, passkey or payment is not found and nothing changes",
        arguments: StorageBackend.available
    )
    func anotherCustomersObject(backend: StorageBackend) async throws {
        try await PasskeyTests.run(backend) { api in
            let desk = try await Self.desk(api)
            let (bob, bobDevice) = try await api.enrolled(TestKey(), username: "bob")
            let bobPayment = try #require(try await api.createPayment(token: bob.access)["paymentId"])
            let bobPasskey = try #require(
                try await api.createPasskey(SimulatedPasskeyProvider(), token: bob.access, name: "Bob's laptop")["passkeyId"]
            )
            try await api.createAccount("alice")
            let snapshot = try await api.snapshot()
            await #expect(throws: SupportError.notFound("the customer has no device \(bobDevice)")) {
                try await desk.revokeDevice(bobDevice, customer: "alice", operator: "mei", reason: "Phone stolen")
            }
            await #expect(throws: SupportError.notFound("the customer has no passkey \(bobPasskey)")) {
                try await desk.revokePasskey(bobPasskey, customer: "alice", operator: "mei", reason: "Laptop lost")
            }
            await #expect(throws: SupportError.notFound("the customer has no payment \(bobPayment)")) {
                try await desk.cancelPayment(bobPayment, customer: "alice", operator: "mei", reason: "Not started by the customer")
            }
            #expect(try await api.snapshot() == snapshot, "nothing of bob's changed")
            try await desk.revokeDevice(bobDevice, customer: "bob", operator: "mei", reason: "Phone stolen")
            #expect(try await desk.customer("bob").devices[0].revokedAt != nil, "named with its own customer, the device is revoked")
            await desk.close()
        }
    }

    @Test(
        "payments search: by state as the customer sees it, payee id or part of its name, dates and amounts; wildcards are literal",
        arguments: StorageBackend.available
    )
    func paymentSearch(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let desk = try await Self.desk(api)
            try await api.registerPayeeIfValid("tom-1", name: "Tom & Jerry's")
            try await api.createAccount()
            let alice = try await api.signIn()
            let early = try #require(
                try await api.createPayment(token: alice.access, amountMinor: 500, payeeID: "tom-1", payeeName: nil)["paymentId"]
            )
            api.clock.advance(by: 400)  // the first payment expires unattended
            let alice2 = try await api.signIn(installation: "phone-2")
            let coffee = try #require(try await api.createPayment(token: alice2.access, amountMinor: 8800)["paymentId"])
            api.clock.advance(by: 1)
            let tom = try #require(
                try await api.createPayment(token: alice2.access, amountMinor: 1200, payeeID: "tom-1", payeeName: nil)["paymentId"]
            )
            try await desk.cancelPayment(tom, customer: "alice", operator: "mei", reason: "Customer did not start it")

            let ids = { (search: SupportDesk.PaymentSearch) in try await desk.payments(search).map(\.payment.id) }
            #expect(try await ids(.init()) == [tom, coffee, early], "newest first")
            #expect(try await ids(.init(status: "expired")) == [early], "a pending payment past its expiry is expired")
            #expect(try await ids(.init(status: "pending")) == [coffee])
            #expect(try await ids(.init(status: "cancelled")) == [tom])
            #expect(try await ids(.init(payee: "tom-1")) == [tom, early])
            #expect(try await ids(.init(payee: "JERRY")) == [tom, early], "part of the name, any case")
            #expect(try await ids(.init(payee: "%")) == [], "a wildcard is matched literally")
            #expect(try await ids(.init(minAmountMinor: 1000, maxAmountMinor: 9000)) == [tom, coffee])
            #expect(try await ids(.init(until: api.clock.now.addingTimeInterval(-200))) == [early])
            await #expect(throws: SupportError.self, "an unknown state is refused") { try await desk.payments(.init(status: "coffee")) }
            #expect(try await desk.payments(.init(status: "pending")).map(\.username) == ["alice"])
            await desk.close()
        }
    }

    @Test("the overview counts sign-ins by method and hour, and failures by problem code, over the last 24 hours")
    func overview() async throws {
        try await TestServer.run { api in
            let desk = try await Self.desk(api)
            let key = TestKey()
            _ = try await api.enrolled(key)  // one password sign-in
            api.clock.advance(by: 3600)
            #expect(try await api.biometricSignIn(key, counter: 1).status == 201)
            _ = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "wrong!", "installationId": "p"])
            _ = try await api.call(.post, "/v1/sessions", json: ["username": "nobody", "password": "wrong!", "installationId": "p"])
            let overview = try await desk.overview(hours: 24)
            #expect(overview.hours.count == 24 && overview.hours.last?.start ?? .distantPast <= api.clock.now)
            #expect(overview.hours.map(\.password).reduce(0, +) == 1 && overview.hours.map(\.biometric).reduce(0, +) == 1)
            #expect(
                overview.hours.last?.biometric == 1 && overview.hours.last?.failures ?? 0 >= 1,
                "this hour: \(String(describing: overview.hours.last))"
            )
            #expect(overview.failuresByCode.first?.code == "invalid_credentials")
            let chart = Console.chart(overview, language: .english, time: ConsoleTime(timeZone: "UTC", language: .english, now: api.clock.now))
            #expect(chart.hasPrefix("<svg") && chart.contains("#1d4ed8") && !chart.contains("<script") && !chart.contains("style="))
            api.clock.advance(by: 25 * 3600)
            #expect(try await desk.overview(hours: 24).hours.allSatisfy { $0.password + $0.biometric + $0.failures == 0 }, "a day later")
            await desk.close()
        }
    }

    @Test("only an admin creates and disables operators and registers payees; each is audited with the admin's id")
    func administration() async throws {
        try await TestServer.run { api in
            let desk = try await Self.desk(api)
            let operators = Operators(service: api.service)
            let ada = try await operators.create(name: "ada", role: .admin, password: "correct horse battery")
            let mei = try #require(try await operators.list().first { $0.name == "mei" })
            await #expect(throws: SupportError.notAllowed("only admins can do this")) {
                try await desk.createOperator(name: "eve", role: .admin, password: "correct horse battery", by: mei)
            }
            let neo = try await desk.createOperator(name: "neo", role: .viewer, password: "correct horse battery", by: ada)
            #expect(neo.createdBy == ada.id)
            await #expect(throws: SupportError.invalid("an admin cannot do this to themself")) {
                try await desk.disableOperator(name: "ada", by: ada)
            }
            try await desk.disableOperator(name: "neo", by: ada)
            try await desk.registerPayee(id: "tea-9", name: "Tea House", verified: true, by: ada)
            await #expect(throws: SupportError.self, "a look-alike name") {
                try await desk.registerPayee(id: "tea-8", name: "Теа House", verified: true, by: ada)
            }
            #expect(try await PayeeRegistry(database: api.database).list().map(\.registeredBy) == [ada.id])
            let audited = try await api.database.transaction { db in
                try await db.raw("SELECT kind, operator_id FROM audit_events WHERE operator_id IS NOT NULL ORDER BY sequence").all().map {
                    "\(try $0.decode(column: "kind", as: String.self)) \(try $0.decode(column: "operator_id", as: String.self))"
                }
            }
            // The set-up's operators were made as the command line makes them; then ada's actions.
            #expect(audited.prefix(3) == ["operator_created bioauth-admin", "operator_created bioauth-admin", "operator_created bioauth-admin"])
            #expect(audited.dropFirst(3) == ["operator_created \(ada.id)", "operator_disabled \(ada.id)", "payee_registered \(ada.id)"])
            // A service client disabled from the console: its credentials stop working at once.
            let bank = try await ServiceClients(database: api.database, clock: api.clock).create(name: "core-banking", scopes: ["webhooks:write"])
            let token = try #require(try await api.serviceToken(bank)["access_token"])
            _ = try await api.call(
                .post,
                "/v1/service/webhook-endpoints",
                json: ["url": "https://bank.example/hooks", "events": ["payment.authorized"]],
                token: token
            )
            #expect(try await desk.webhookEndpoints().map(\.url) == ["https://bank.example/hooks"])
            await #expect(throws: SupportError.self) { try await desk.disableServiceClient(bank.clientID, by: mei) }
            try await desk.disableServiceClient(bank.clientID, by: ada)
            #expect(try await api.call(.get, "/v1/service/webhook-endpoints", token: token).code == "invalid_service_token")
            #expect(try await api.serviceToken(bank).code == "invalid_client")
            await #expect(throws: SupportError.self, "an unknown client") { try await desk.disableServiceClient("svc_nobody", by: ada) }
            await desk.close()
        }
    }

    @Test("a console session ends after 15 idle minutes, 8 hours after sign-in however busy, at sign-out, and when its operator is disabled")
    func consoleSessionLifetime() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            let mei = try await operators.create(name: "mei", role: .support, password: "correct horse battery")
            let sessions = ConsoleSessions(service: api.service)

            let idle = try await sessions.start(for: mei)
            #expect(try await sessions.session(idle)?.operator.id == mei.id)
            api.clock.advance(by: 15 * 60 + 1)
            #expect(try await sessions.session(idle) == nil, "idle for more than 15 minutes")

            let busy = try await sessions.start(for: mei)
            var elapsed: TimeInterval = 0
            while elapsed + 840 < 8 * 3600 {
                api.clock.advance(by: 840)
                elapsed += 840
                #expect(try await sessions.session(busy) != nil, "a request every 14 minutes keeps it alive")
            }
            api.clock.advance(by: 8 * 3600 - elapsed + 1)
            #expect(try await sessions.session(busy) == nil, "8 hours after sign-in, however busy")

            let ended = try await sessions.start(for: mei)
            try await sessions.end(ended)
            #expect(try await sessions.session(ended) == nil, "signed out")
            #expect(try await sessions.session("not-a-token-but-long-enough-to-look-up") == nil)

            // The limits are settings: a desk that wants 5 idle minutes and a 1-hour day gets them.
            let strict = ConsoleSessions(
                database: api.database,
                clock: api.clock,
                random: SystemRandomSource(),
                idleTimeout: 300,
                absoluteTimeout: 3600
            )
            let short = try await strict.start(for: mei)
            api.clock.advance(by: 299)
            #expect(try await strict.session(short) != nil)
            api.clock.advance(by: 302)
            #expect(try await strict.session(short) == nil, "idle for more than the configured 5 minutes")
            let day = try await strict.start(for: mei)
            for _ in 0..<12 {
                api.clock.advance(by: 290)
                #expect(try await strict.session(day) != nil)
            }
            api.clock.advance(by: 121)
            #expect(try await strict.session(day) == nil, "past the configured hour")

            let live = try await sessions.start(for: mei)
            try await operators.disable(name: "mei")
            #expect(try await sessions.session(live) == nil, "the operator is disabled")
        }
    }

    @Test(
        "every answer under a browser page's path carries its security headers: a console 404 and 405, a passkey page 404, a console 500",
        arguments: [false, true]
    )
    func browserPageProblemsCarryHeaders(consoleEnabled: Bool) async throws {
        try await TestServer.run(
            configure: { $0.consoleEnabled = consoleEnabled },
            { api in
                for (method, path) in [(HTTPRequest.Method.get, "/console/nope"), (.delete, "/console/overview"), (.get, "/console")] {
                    let reply = try await api.call(method, path)
                    if reply.status < 400 { continue }  // /console redirects to the overview when the console is on
                    #expect(reply.headers[.contentSecurityPolicy] == Console.securityHeaders[.contentSecurityPolicy], "\(method) \(path)")
                    #expect(reply.headers[HTTPField.Name("X-Frame-Options")!] == "DENY" && reply.headers[.xContentTypeOptions] == "nosniff")
                    #expect(reply.headers[.cacheControl] == "no-store" && reply.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
                }
                let web = try await api.call(.get, "/web/nope")
                #expect(web.status == 404 && web.headers[.contentSecurityPolicy] == PasskeyWebPage.securityHeaders[.contentSecurityPolicy])
                let apiProblem = try await api.call(.get, "/v1/nope")
                #expect(apiProblem.status == 404 && apiProblem.headers[.contentSecurityPolicy] == nil, "the API's answers are not pages")
            }
        )
    }

    @Test("with a console port the console is served on its own listener only: 404 on the API's, pages (and their headers) on its own")
    func consoleListener() async throws {
        try await TestServer.run(
            .live,
            configure: {
                $0.consoleEnabled = true
                $0.consolePort = 0
            },
            { api in
                let port = try #require(await api.consolePorts.first { _ in true })
                let onAPI = try await api.call(.get, "/console/sign-in")
                #expect(onAPI.status == 404 && onAPI.code == "not_found", "not on the API's listener")
                let bytes = try await RawHTTPConnection.offPool {
                    try RawHTTPConnection.exchange(
                        port: port,
                        Array("GET /console/sign-in HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
                    )
                }
                let page = try #require(RawHTTPConnection.parse(bytes))
                #expect(page.status == 200 && page.body.contains("Operator sign-in"), "\(page.status)")
                #expect(page.headers.lowercased().contains("content-security-policy: default-src 'none'"))
                let api404 = try await RawHTTPConnection.offPool {
                    try RawHTTPConnection.exchange(port: port, Array("GET /v1/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
                }
                #expect(RawHTTPConnection.parse(api404)?.status == 404, "the API is not on the console's listener")
            }
        )
    }

    @Test("the operator console is off unless enabled: its pages are not served")
    func consoleOffByDefault() async throws {
        try await TestServer.run { api in
            let page = try await api.call(.get, "/console/sign-in")
            #expect(page.status == 404 && page.code == "not_found")
        }
        try await TestServer.run(
            configure: { $0.consoleEnabled = true },
            { api in
                let page = try await api.call(.get, "/console/sign-in")
                #expect(
                    page.status == 200 && page.raw.contains("Operator sign-in")
                        && page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true
                )
                // English and Simplified Chinese: by Accept-Language, and by the switch, which is remembered in a cookie.
                let chinese = try await api.call(.get, "/console/sign-in", headers: [.acceptLanguage: "zh-CN,zh;q=0.9,en;q=0.8"])
                #expect(chinese.raw.contains("运营人员登录") && chinese.raw.contains(#"<html lang="zh-Hans">"#), "\(chinese.raw)")
                let switched = try await api.call(.get, "/console/sign-in?lang=en", headers: [.acceptLanguage: "zh-CN"])
                #expect(
                    switched.raw.contains("Operator sign-in") && switched.headers[.setCookie]?.hasPrefix("__Host-bioauth-console-lang=en;") == true
                )
            }
        )
    }

    @Test("'I'm locked out': unlocking lifts the password lock and the PIN lock; 'did my payment go through?': a pending one is cancelled")
    func lockedOut() async throws {
        try await TestServer.run { api in
            let desk = try await Self.desk(api)
            try await api.createAccount()
            let tokens = try await api.signIn()
            #expect(try await api.setPIN(token: tokens.access).status == 204)
            for _ in 0..<5 {
                _ = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "wrong!", "installationId": "p"])
            }
            #expect(
                try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "correct horse", "installationId": "p"]).code
                    == "account_locked"
            )
            #expect(try await desk.customer("alice").lockedUntil != nil)
            try await desk.unlockAccount(customer: "alice", operator: "mei", reason: "Identity checked on call 4712")
            let back = try await api.signIn(installation: "phone-2")
            #expect(try await desk.customer("alice").lockedUntil == nil)

            let payment = try #require(try await api.createPayment(token: back.access)["paymentId"])
            for _ in 0..<5 { _ = try await api.call(.post, "/v1/payments/\(payment)/pin-authorization", json: ["pin": "111112"], token: back.access) }
            #expect(try await desk.customer("alice").pinLockedUntil != nil)
            try await desk.clearPINLock(customer: "alice", operator: "mei", reason: "Identity checked on call 4712")
            let other = try #require(try await api.createPayment(token: back.access, amountMinor: 100)["paymentId"])
            let paid = try await api.call(.post, "/v1/payments/\(other)/pin-authorization", json: ["pin": "258046"], token: back.access)
            #expect(paid["status"] == "authorized", "\(paid.raw)")

            let third = try #require(try await api.createPayment(token: back.access, amountMinor: 200)["paymentId"])
            try await desk.cancelPayment(third, customer: "alice", operator: "mei", reason: "Customer did not start it")
            #expect(try await api.call(.get, "/v1/payments/\(third)", token: back.access)["status"] == "cancelled")
            await #expect(throws: SupportError.invalid("the payment is cancelled, not pending")) {
                try await desk.cancelPayment(third, customer: "alice", operator: "mei", reason: "again")
            }
            try await desk.endSessions(customer: "alice", operator: "mei", reason: "Customer asked to sign out everywhere")
            #expect(try await api.call(.get, "/v1/me", token: back.access).code == "session_ended")
            let kinds = try await desk.customer("alice").events.filter { $0.operatorID != nil }.map(\.kind)
            #expect(kinds == ["sessions_ended", "payment_cancelled", "payment_pin_unlocked", "account_unlocked"])
            await #expect(throws: SupportError.self) { try await desk.customer("nobody") }
            await desk.close()
        }
    }
}

extension SupportDeskTests {
    @Test("an admin's action and its audit event are one unit of work: when the audit event cannot be written, nothing changes")
    func adminActionsAreAtomic() async throws {
        try await TestServer.run { api in
            let desk = try await Self.desk(api)
            let operators = Operators(service: api.service)
            let ada = try await operators.create(name: "ada", role: .admin, password: "correct horse battery")
            let client = try await ServiceClients(database: api.database, clock: api.clock).create(name: "gateway", scopes: ["sessions:introspect"])
            // The audit log refuses every write from now on (SQLite aborts the statement, and so the transaction).
            try await api.database.transaction { db in
                try await db.raw("CREATE TRIGGER audit_down BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit log unavailable'); END")
                    .run()
            }
            await #expect(throws: (any Error).self) {
                _ = try await desk.createOperator(name: "neo", role: .viewer, password: "correct horse battery", by: ada)
            }
            await #expect(throws: (any Error).self) { try await desk.disableOperator(name: "mei", by: ada) }
            await #expect(throws: (any Error).self) { try await desk.disableServiceClient(client.clientID, by: ada) }
            let names = try await operators.list()
            #expect(!names.contains { $0.name == "neo" }, "no operator without its audit event")
            #expect(names.first { $0.name == "mei" }?.disabledAt == nil, "mei is still enabled")
            let disabled = try await api.database.transaction { db in
                try await db.raw("SELECT disabled_at FROM service_clients WHERE id = \(bind: client.clientID)").first()?.decode(
                    column: "disabled_at",
                    as: Int64?.self
                )
            }
            #expect(disabled == nil, "the client still works")
            await desk.close()
        }
    }
}

extension SupportDeskTests {
    @Test("console sign-in is limited per client address across operator names, so one address cannot guess through every operator")
    func consoleSignInRateLimit() async throws {
        try await TestServer.run(
            .live,
            configure: { $0.consoleEnabled = true },
            { api in
                _ = try await Self.desk(api)
                func attempt(_ name: String) async throws -> (status: Int, raw: String) {
                    try await Self.consoleSignIn(api, form: "name=\(name)&password=wrong+horse+battery")
                }
                for index in 0..<Console.signInAttemptsPerAddress {
                    let reply = try await attempt(index % 2 == 0 ? "mei" : "vic\(index)")
                    #expect(reply.status == 401, "attempt \(index): \(reply.status)")
                }
                let refused = try await attempt("someone-else")
                #expect(refused.status == 429 && refused.raw.contains("Too many sign-in attempts from this address"), "\(refused.status)")
                api.clock.advance(by: 61)
                #expect(try await attempt("mei").status == 401, "a new window")
            }
        )
    }
}

extension SupportDeskTests {
    @Test(
        "the console never confirms a password alone: an enrolled operator's right password without a code, a wrong password and an unknown name get the same page"
    )
    func passwordNeverConfirmedAlone() async throws {
        try await TestServer.run(
            .live,
            configure: { $0.consoleEnabled = true },
            { api in
                _ = try await Self.desk(api)
                _ = try await OperatorTests.enroll("mei", with: Operators(service: api.service), at: api.clock.now)
                func attempt(_ name: String, _ password: String) async throws -> (status: Int, raw: String) {
                    try await Self.consoleSignIn(api, form: "name=\(name)&password=\(password)&code=")
                }
                let rightWithoutCode = try await attempt("mei", "correct+horse+battery")
                let wrong = try await attempt("mei", "wrong+horse+battery")
                let unknown = try await attempt("nobody", "correct+horse+battery")
                #expect(rightWithoutCode.status == 401 && wrong.status == 401 && unknown.status == 401)
                #expect(rightWithoutCode.raw.contains("The name, password or code is wrong."))
                #expect(rightWithoutCode.raw == wrong.raw.replacingOccurrences(of: "wrong+horse", with: "correct+horse"), "one page for both")
                #expect(unknown.raw.replacingOccurrences(of: "nobody", with: "mei") == rightWithoutCode.raw, "and for an unknown name")
            }
        )
    }

    @Test("a retention purge in the middle of an operator's lock does not lift it")
    func purgeKeepsOperatorLocks() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            _ = try await operators.create(name: "mei", role: .support, password: "correct horse battery")
            for attempt in 0..<Operators.maxFailures {
                await #expect(throws: OperatorError.self) {
                    try await operators.signIn(name: "mei", password: "guess guess \(attempt)", code: nil, address: "203.0.113.5")
                }
            }
            let lockEnds = api.clock.now.addingTimeInterval(Operators.lockDuration)
            api.clock.advance(by: 10 * 60)
            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            _ = try #require(try await retention.purge())
            await #expect(throws: OperatorError.locked(until: lockEnds)) {
                try await operators.signIn(name: "mei", password: "correct horse battery", code: nil, address: "203.0.113.5")
            }
        }
    }

    @Test("failures from many addresses lock a name everywhere once they reach the slower backstop")
    func backstop() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            _ = try await operators.create(name: "mei", role: .support, password: "correct horse battery")
            for attempt in 0..<Operators.maxFailuresPerName {
                await #expect(throws: OperatorError.self) {
                    try await operators.signIn(name: "mei", password: "guess guess \(attempt)", code: nil, address: "198.51.100.\(attempt % 25)")
                }
            }
            await #expect(throws: OperatorError.locked(until: api.clock.now.addingTimeInterval(Operators.lockDuration))) {
                try await operators.signIn(name: "mei", password: "correct horse battery", code: nil, address: "10.9.9.9")
            }
        }
    }

    @Test(
        "console sign-in checks passwords on the server's hashing threads (as customers' are), an unknown name included, never on a request's thread"
    )
    func consoleSignInOnHashingThreads() async throws {
        try await TestServer.run(
            .live,
            configure: {
                $0.consoleEnabled = true
                $0.metricsPort = 0
            },
            { api in
                _ = try await Self.desk(api)
                let port = try #require(await api.metricsPorts.first { _ in true })
                let before = try await MetricsTests.scrape(port).value("bioauth_password_hash_wait_seconds_count") ?? 0
                for name in ["mei", "nobody-here"] {
                    #expect(try await Self.consoleSignIn(api, form: "name=\(name)&password=wrong+horse+battery").status == 401)
                }
                let after = try await MetricsTests.scrape(port)
                #expect(after.value("bioauth_password_hash_wait_seconds_count") == before + 2, "\(after.text)")
                #expect(after.value("bioauth_password_hash_queue_depth") == 0)
            }
        )
    }
}
