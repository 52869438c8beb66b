import BioAuthCore
import BioAuthTesting
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import BioAuthServer

/// An operator's own lifecycle: they choose their password at their first sign-in and change it themselves; an admin
/// resets a password or a second factor, re-enables, changes a role, each audited with the admin and the reason.
@Suite("Operator lifecycle")
struct OperatorLifecycleTests {
    static let initial = "chosen by the admin"
    static let own = "only mei knows this one"

    /// The audit events of operator changes, as `kind operator_id reason`.
    /// The operator changes after the test's set-up: the operators it made as `bioauth admin operator create` does (audited
    /// by `bioauth-admin`, which `AdminCommandTests` checks) are left out.
    static func changes(_ api: API) async throws -> [String] {
        try await SupportDesk(service: api.service).operatorChanges().reversed()
            .filter { $0.operatorID != SupportAction.commandLineActor }
            .map { "\($0.kind) \($0.operatorID) \($0.reason)" }
    }

    @Test(
        "a new operator chooses their own password before a key is shown; afterwards the initial password opens nothing",
        arguments: StorageBackend.available
    )
    func firstSignIn(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let operators = Operators(service: api.service)
            let made = try await operators.create(name: "mei", role: .support, password: Self.initial)
            #expect(made.mustChangePassword)
            guard case .changePassword(let signedIn) = try await operators.signIn(name: "mei", password: Self.initial, code: nil) else {
                Issue.record("the initial password did not lead to choosing one")
                return
            }
            let listed = try await operators.list()
            #expect(signedIn.id == made.id && listed[0].totpEnrolled == false)
            let stored = try await api.database.transaction { db in try await db.operators.totpKeys() }
            #expect(stored.isEmpty, "no key was shown to whoever holds the initial password")
            // A restricted console session: every page but the password page sends it there.
            let restricted = try await ConsoleSessions(service: api.service).start(for: signedIn)
            #expect(try await ConsoleSessions(service: api.service).session(restricted)?.isRestricted == true)

            await #expect(throws: OperatorError.invalid("the new password must differ from the current one")) {
                try await operators.choosePassword(operatorID: made.id, newPassword: Self.initial)
            }
            await #expect(throws: OperatorError.self, "too short") { try await operators.choosePassword(operatorID: made.id, newPassword: "short") }
            let chosen = try await operators.choosePassword(operatorID: made.id, newPassword: Self.own)
            #expect(!chosen.mustChangePassword)
            #expect(try await ConsoleSessions(service: api.service).session(restricted) == nil, "the restricted session ended")
            await #expect(throws: OperatorError.invalid("there is no password to choose"), "only once") {
                try await operators.choosePassword(operatorID: made.id, newPassword: "yet another password")
            }
            await #expect(throws: OperatorError.invalidCredentials, "the admin's password opens nothing now") {
                try await operators.signIn(name: "mei", password: Self.initial, code: nil)
            }
            guard case .enrollTOTP(let key, _, false) = try await operators.signIn(name: "mei", password: Self.own, code: nil) else {
                Issue.record("no enrollment after choosing the password")
                return
            }
            guard
                case .signedIn(let enrolled) = try await operators.signIn(
                    name: "mei",
                    password: Self.own,
                    code: OperatorTests.totp(typed: key, at: api.clock.now)
                )
            else {
                Issue.record("not signed in")
                return
            }
            #expect(enrolled.totpEnrolled && !enrolled.mustChangePassword)
            #expect(try await Self.changes(api) == ["operator_password_changed \(made.id) chosen at sign-in"])
        }
    }

    @Test("an operator changes their own password with the current one and a code; their other sessions end; a wrong code counts as a failure")
    func ownChange() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            let mei = try await operators.create(name: "mei", role: .support, password: Self.initial, mustChangePassword: false)
            let key = try await Self.enroll("mei", password: Self.initial, api: api)
            let sessions = ConsoleSessions(service: api.service)
            let here = try await sessions.start(for: mei)
            let elsewhere = try await sessions.start(for: mei)
            api.clock.advance(by: 30)
            await #expect(throws: OperatorError.invalidCredentials, "a wrong code") {
                try await operators.changePassword(operatorID: mei.id, current: Self.initial, code: "000000", newPassword: Self.own)
            }
            await #expect(throws: OperatorError.invalidCredentials, "a wrong current password") {
                try await operators.changePassword(
                    operatorID: mei.id,
                    current: "not the password",
                    code: OperatorTests.totp(typed: key, at: api.clock.now),
                    newPassword: Self.own
                )
            }
            // A refused new password (the current one again) changes nothing: the same code still changes it afterwards.
            let before = try await api.snapshot()
            await #expect(throws: OperatorError.invalid("the new password must differ from the current one")) {
                try await operators.changePassword(
                    operatorID: mei.id,
                    current: Self.initial,
                    code: OperatorTests.totp(typed: key, at: api.clock.now),
                    newPassword: Self.initial
                )
            }
            #expect(try await api.snapshot() == before, "nothing stored")
            try await operators.changePassword(
                operatorID: mei.id,
                current: Self.initial,
                code: OperatorTests.totp(typed: key, at: api.clock.now),
                newPassword: Self.own,
                keepingSession: BioAuthService.tokenHash(here)
            )
            #expect(try await sessions.session(here) != nil, "the session that changed it stays")
            #expect(try await sessions.session(elsewhere) == nil, "the other one ended")
            api.clock.advance(by: 30)
            await #expect(throws: OperatorError.invalidCredentials) {
                try await operators.signIn(name: "mei", password: Self.initial, code: OperatorTests.totp(typed: key, at: api.clock.now))
            }
            guard
                case .signedIn = try await operators.signIn(name: "mei", password: Self.own, code: OperatorTests.totp(typed: key, at: api.clock.now))
            else {
                Issue.record("the new password does not sign in")
                return
            }
        }
    }

    @Test(
        "an admin resets a colleague's password and second factor: sessions end, the colleague sets their own password and enrolls again, old codes are refused; all audited",
        arguments: StorageBackend.available
    )
    func adminResets(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let operators = Operators(service: api.service)
            let desk = SupportDesk(service: api.service)
            let ada = try await operators.create(name: "ada", role: .admin, password: Self.initial, mustChangePassword: false)
            let mei = try await operators.create(name: "mei", role: .support, password: Self.initial, mustChangePassword: false)
            let key = try await Self.enroll("mei", password: Self.initial, api: api)
            let session = try await ConsoleSessions(service: api.service).start(for: mei)

            await #expect(throws: SupportError.notAllowed("only admins can do this")) {
                try await desk.resetOperatorTOTP(name: "ada", reason: "lost phone", by: mei)
            }
            await #expect(throws: SupportError.invalid("an admin cannot do this to themself")) {
                try await desk.resetOperatorPassword(name: "ada", temporaryPassword: "temporary password 1", reason: "forgot", by: ada)
            }
            await #expect(throws: SupportError.self, "a reason is required") {
                try await desk.resetOperatorTOTP(name: "mei", reason: " ", by: ada)
            }
            await #expect(throws: SupportError.notFound("there is no operator named nobody")) {
                try await desk.resetOperatorTOTP(name: "nobody", reason: "lost phone", by: ada)
            }

            // The password: mei signs in with the temporary one and her code, and must choose her own.
            try await desk.resetOperatorPassword(name: "mei", temporaryPassword: "temporary password 1", reason: "Forgot it (ticket 4411)", by: ada)
            #expect(try await ConsoleSessions(service: api.service).session(session) == nil, "her sessions ended")
            api.clock.advance(by: 30)
            guard
                case .changePassword(let restricted) = try await operators.signIn(
                    name: "mei",
                    password: "temporary password 1",
                    code: OperatorTests.totp(typed: key, at: api.clock.now)
                )
            else {
                Issue.record("the temporary password did not lead to choosing one")
                return
            }
            #expect(restricted.mustChangePassword && restricted.totpEnrolled)
            _ = try await operators.choosePassword(operatorID: mei.id, newPassword: Self.own)

            // The second factor: her phone is lost; the old key's codes are refused and she enrolls a new one.
            try await desk.resetOperatorTOTP(name: "mei", reason: "Phone lost (ticket 4412)", by: ada)
            api.clock.advance(by: 30)
            guard
                case .enrollTOTP(let fresh, _, false) = try await operators.signIn(
                    name: "mei",
                    password: Self.own,
                    code: OperatorTests.totp(typed: key, at: api.clock.now)
                )
            else {
                Issue.record("the old key still signs in")
                return
            }
            #expect(fresh != key)
            guard
                case .signedIn = try await operators.signIn(
                    name: "mei",
                    password: Self.own,
                    code: OperatorTests.totp(typed: fresh, at: api.clock.now)
                )
            else {
                Issue.record("not enrolled again")
                return
            }
            #expect(
                try await Self.changes(api) == [
                    "operator_password_reset \(ada.id) \(mei.id) (mei): Forgot it (ticket 4411)",
                    "operator_password_changed \(mei.id) chosen at sign-in",
                    "operator_totp_reset \(ada.id) \(mei.id) (mei): Phone lost (ticket 4412)",
                ]
            )
        }
    }

    @Test(
        "an admin re-enables an operator and changes a role, audited; a disabled operator keeps their name; non-admins and the admin themself are refused"
    )
    func enableAndRole() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            let desk = SupportDesk(service: api.service)
            let ada = try await operators.create(name: "ada", role: .admin, password: Self.initial, mustChangePassword: false)
            let vic = try await operators.create(name: "vic", role: .viewer, password: Self.initial, mustChangePassword: false)
            try await desk.disableOperator(name: "vic", reason: "Left the team", by: ada)
            await #expect(throws: SupportError.self, "the name stays taken") {
                try await desk.createOperator(name: "vic", role: .admin, password: Self.initial, by: ada)
            }
            await #expect(throws: SupportError.invalid("vic is not disabled"), "twice") {
                try await desk.enableOperator(name: "vic", reason: "Back", by: ada)
                try await desk.enableOperator(name: "vic", reason: "Back", by: ada)
            }
            await #expect(throws: SupportError.notAllowed("only admins can do this")) {
                try await desk.changeOperatorRole(name: "ada", to: .viewer, reason: "coup", by: vic)
            }
            await #expect(throws: SupportError.invalid("an admin cannot do this to themself")) {
                try await desk.changeOperatorRole(name: "ada", to: .viewer, reason: "oops", by: ada)
            }
            try await desk.changeOperatorRole(name: "vic", to: .support, reason: "Joined the support desk", by: ada)
            #expect(try await operators.list().first { $0.name == "vic" }?.role == .support)
            #expect(
                try await Self.changes(api) == [
                    "operator_disabled \(ada.id) \(vic.id) (vic): Left the team",
                    "operator_enabled \(ada.id) \(vic.id) (vic): Back",
                    "operator_role_changed \(ada.id) \(vic.id) (vic) viewer → support: Joined the support desk",
                ]
            )
        }
    }

    @Test("a restricted session reaches the password page and sign-out only: every other page and action sends it to the password page")
    func restrictedSession() async throws {
        try await TestServer.run(configure: { $0.consoleEnabled = true }, Self.restrictedSessionBody)
    }

    /// The body of ``restrictedSession()``.
    @Sendable static func restrictedSessionBody(_ api: API) async throws {
        let operators = Operators(service: api.service)
        let mei = try await operators.create(name: "mei", role: .admin, password: Self.initial)
        let token = try await ConsoleSessions(service: api.service).start(for: mei)
        let cookie: HTTPFields = [.cookie: "\(ConsoleSessions.cookieName)=\(token)"]
        for path in ["/console/overview", "/console/customers?q=alice", "/console/payments", "/console/admin"] {
            let response = try await api.client.execute(uri: path, method: .get, headers: cookie)
            #expect(response.status == .seeOther && response.headers[.location] == "/console/password", "\(path)")
        }
        var post = cookie
        post[.contentType] = "application/x-www-form-urlencoded"
        let created = try await api.client.execute(
            uri: "/console/admin/operators",
            method: .post,
            headers: post,
            body: ByteBuffer(string: "name=eve&role=admin&password=correct+horse+battery")
        )
        #expect(created.status == .seeOther && created.headers[.location] == "/console/password")
        #expect(try await operators.list().map(\.name) == ["mei"], "no operator was made")
        let page = try await api.client.execute(uri: "/console/password", method: .get, headers: cookie)
        #expect(page.status == .ok && String(buffer: page.body).contains("Choose your password"))
        #expect(!String(buffer: page.body).contains("/console/admin\""), "no navigation to other pages")
    }

    @Test(
        "after an admin reset her password, an enrolled operator signs in with it and her code, chooses her own on the password page, and goes on in the same session"
    )
    func forcedChangeKeepsTheSession() async throws {
        try await TestServer.run(configure: { $0.consoleEnabled = true }, Self.forcedChangeBody)
    }

    /// The body of ``forcedChangeKeepsTheSession()``.
    @Sendable static func forcedChangeBody(_ api: API) async throws {
        let operators = Operators(service: api.service)
        let ada = try await operators.create(name: "ada", role: .admin, password: Self.initial, mustChangePassword: false)
        _ = try await operators.create(name: "mei", role: .support, password: Self.initial, mustChangePassword: false)
        let key = try await Self.enroll("mei", password: Self.initial, api: api)
        try await SupportDesk(service: api.service).resetOperatorPassword(
            name: "mei",
            temporaryPassword: "temporary password 1",
            reason: "Forgot it",
            by: ada
        )
        api.clock.advance(by: 30)
        let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        let code = OperatorTests.totp(typed: key, at: api.clock.now)
        let signedIn = try await api.client.execute(
            uri: "/console/sign-in",
            method: .post,
            headers: form,
            body: ByteBuffer(string: "name=mei&password=temporary+password+1&code=\(code)")
        )
        #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/console/password")
        let cookie = try #require(signedIn.headers[.setCookie]?.split(separator: ";").first.map(String.init))
        let page = String(buffer: try await api.client.execute(uri: "/console/password", method: .get, headers: [.cookie: cookie]).body)
        let csrf = try #require(
            page.range(of: #"name="csrf" value="[^"]+""#, options: .regularExpression).map {
                String(page[$0].dropFirst(#"name="csrf" value=""#.count).dropLast())
            }
        )
        var post = form
        post[.cookie] = cookie
        let chosen = try await api.client.execute(
            uri: "/console/password",
            method: .post,
            headers: post,
            body: ByteBuffer(
                string:
                    "csrf=\(csrf)&new=\(Self.own.replacingOccurrences(of: " ", with: "+"))&repeat=\(Self.own.replacingOccurrences(of: " ", with: "+"))"
            )
        )
        #expect(chosen.status == .seeOther && chosen.headers[.location] == "/console/overview?done=password-changed")
        let overview = try await api.client.execute(uri: "/console/overview?done=password-changed", method: .get, headers: [.cookie: cookie])
        #expect(overview.status == .ok && String(buffer: overview.body).contains("Your password is changed."), "the same session goes on")
    }

    /// Signs `name` in for the first time with `password` and enrolls the key shown; returns it (typed).
    static func enroll(_ name: String, password: String, api: API) async throws -> String {
        let operators = Operators(service: api.service)
        guard case .enrollTOTP(let typed, _, _) = try await operators.signIn(name: name, password: password, code: nil),
            case .signedIn = try await operators.signIn(name: name, password: password, code: OperatorTests.totp(typed: typed, at: api.clock.now))
        else { throw OperatorTests.EnrollmentFailed() }
        return typed
    }
}
