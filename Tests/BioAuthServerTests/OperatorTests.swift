import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

@testable import BioAuthServer

/// Operators sign in with a password and a TOTP second factor enrolled at the first sign-in; failures lock sign-in.
@Suite("Operators")
struct OperatorTests {
    static func totp(typed: String, at date: Date) -> String { AuthenticatorApp(typed: typed)?.code(at: date) ?? "" }

    /// Signs `name` in for the first time (password `correct horse battery`) and enrolls the key shown; returns it (typed).
    static func enroll(_ name: String, with operators: Operators, at date: Date) async throws -> String {
        guard case .enrollTOTP(let typed, _, _) = try await operators.signIn(name: name, password: "correct horse battery", code: nil) else {
            throw EnrollmentFailed()
        }
        guard case .signedIn = try await operators.signIn(name: name, password: "correct horse battery", code: totp(typed: typed, at: date)) else {
            throw EnrollmentFailed()
        }
        return typed
    }

    struct EnrollmentFailed: Error {}

    static func totp(_ secret: String, at date: Date) -> String { AuthenticatorApp(key: Data(secret.utf8)).code(at: date) }

    static func base32(_ text: String) -> Data { AuthenticatorApp(typed: text)?.key ?? Data() }

    @Test("RFC 6238's SHA-1 vectors: the code of each time is found in its step, and not two steps away")
    func rfcVectors() {
        let secret = "12345678901234567890"
        for (time, code) in [(59.0, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"), (2_000_000_000, "279037")] {
            let date = Date(timeIntervalSince1970: time)
            #expect(Self.totp(secret, at: date) == code)
            #expect(Operators.matchingStep(code, secret: secret, at: date) == Int64(time / 30))
            #expect(Operators.matchingStep(code, secret: secret, at: date.addingTimeInterval(30)) == Int64(time / 30), "one step late is accepted")
            #expect(Operators.matchingStep(code, secret: secret, at: date.addingTimeInterval(90)) == nil, "three steps late is not")
        }
        #expect(Operators.matchingStep("28708", secret: secret, at: Date(timeIntervalSince1970: 59)) == nil)
        #expect(Operators.matchingStep("２８７０８２", secret: secret, at: Date(timeIntervalSince1970: 59)) == nil, "ASCII digits only")
    }

    @Test(
        "first sign-in enrolls TOTP from an otpauth URI; then password and code; a code is never accepted twice",
        arguments: StorageBackend.available
    )
    func enrollAndSignIn(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let operators = Operators(service: api.service)
            let made = try await operators.create(name: "mei.support", role: .support, password: "correct horse battery", mustChangePassword: false)
            #expect(made.id.hasPrefix("op_") && !made.totpEnrolled)
            await #expect(throws: OperatorError.invalidCredentials) {
                try await operators.signIn(name: "mei.support", password: "wrong password!", code: nil)
            }
            await #expect(throws: OperatorError.invalidCredentials) {
                try await operators.signIn(name: "nobody", password: "correct horse battery", code: nil)
            }

            guard
                case .enrollTOTP(let secret, let uri, false) = try await operators.signIn(
                    name: "mei.support",
                    password: "correct horse battery",
                    code: nil
                )
            else {
                Issue.record("no enrollment offered")
                return
            }
            #expect(uri == "otpauth://totp/BioAuth:mei.support?secret=\(secret)&issuer=BioAuth", "the key to type is the URI's: \(uri)")
            #expect(Self.base32(secret).count == 32, "a 256-bit key")
            // A new key on every visit before enrollment: a code from the key shown before does not enroll.
            guard
                case .enrollTOTP(let fresh, _, _) = try await operators.signIn(name: "mei.support", password: "correct horse battery", code: nil)
            else {
                Issue.record("no enrollment offered on the second visit")
                return
            }
            #expect(fresh != secret, "a fresh key on each visit")
            // A wrong code while enrolling, with the right password: the same key again, not a new one, and not enrolled.
            let earlier = try await operators.signIn(
                name: "mei.support",
                password: "correct horse battery",
                code: Self.totp(typed: secret, at: api.clock.now)
            )
            #expect(earlier == .enrollTOTP(secret: fresh, uri: uri.replacingOccurrences(of: secret, with: fresh), afterWrongCode: true))
            let typo = try await operators.signIn(name: "mei.support", password: "correct horse battery", code: "000000")
            #expect(typo == .enrollTOTP(secret: fresh, uri: uri.replacingOccurrences(of: secret, with: fresh), afterWrongCode: true))
            #expect(try await operators.list().map(\.totpEnrolled) == [false])
            await #expect(throws: OperatorError.invalidCredentials, "a wrong password with a code shows no key") {
                try await operators.signIn(name: "mei.support", password: "wrong password!", code: "000000", address: "10.0.0.4")
            }
            let code = Self.totp(typed: fresh, at: api.clock.now)
            guard case .signedIn(let signedIn) = try await operators.signIn(name: "mei.support", password: "correct horse battery", code: code) else {
                Issue.record("not signed in")
                return
            }
            #expect(signedIn.role == .support && signedIn.totpEnrolled)
            #expect(try await operators.list().map(\.totpEnrolled) == [true])
            // Enrolled: the right password without a code is answered as a wrong one (the password is never confirmed alone).
            await #expect(throws: OperatorError.invalidCredentials) {
                try await operators.signIn(name: "mei.support", password: "correct horse battery", code: nil)
            }
            // (From another desk: five failures from one address would lock the name there.)
            await #expect(throws: OperatorError.invalidCredentials, "a used code is refused") {
                try await operators.signIn(name: "mei.support", password: "correct horse battery", code: code, address: "10.0.0.2")
            }
            api.clock.advance(by: 30)
            let next = try await operators.signIn(
                name: "mei.support",
                password: "correct horse battery",
                code: Self.totp(typed: fresh, at: api.clock.now)
            )
            guard case .signedIn(let again) = next else {
                Issue.record("not signed in: \(next)")
                return
            }
            #expect(again.id == signedIn.id && again.role == signedIn.role && again.totpEnrolled)
            // Each sign-in is the operator's last, as the admin page lists them.
            #expect(signedIn.lastSignInAt == api.clock.now.addingTimeInterval(-30) && again.lastSignInAt == api.clock.now)
            #expect(try await operators.list().first { $0.id == signedIn.id }?.lastSignInAt == api.clock.now)
        }
    }

    @Test(
        "five failures from one address lock the name there for the window, right password and code included, and nowhere else; an unknown name locks alike"
    )
    func lockout() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            _ = try await operators.create(name: "li.admin", role: .admin, password: "correct horse battery", mustChangePassword: false)
            guard case .enrollTOTP(let secret, _, _) = try await operators.signIn(name: "li.admin", password: "correct horse battery", code: nil)
            else {
                Issue.record("no enrollment offered")
                return
            }
            for name in ["li.admin", "no.such.operator"] {
                for attempt in 1...5 {
                    let error = await #expect(throws: OperatorError.self) {
                        try await operators.signIn(name: name, password: "guess \(attempt) guess", code: nil, address: "203.0.113.9")
                    }
                    #expect(attempt < 5 ? error == .invalidCredentials : error == .locked(until: api.clock.now.addingTimeInterval(900)), "\(name)")
                }
                // The same answer for a name that exists and one that does not.
                await #expect(throws: OperatorError.locked(until: api.clock.now.addingTimeInterval(900)), "\(name)") {
                    try await operators.signIn(name: name, password: "correct horse battery", code: "123456", address: "203.0.113.9")
                }
            }
            await #expect(throws: OperatorError.locked(until: api.clock.now.addingTimeInterval(900))) {
                try await operators.signIn(
                    name: "LI.ADMIN",
                    password: "correct horse battery",
                    code: Self.totp(typed: secret, at: api.clock.now),
                    address: "203.0.113.9"
                )
            }
            // The flood came from one address: the operator at their own desk signs in.
            guard
                case .signedIn = try await operators.signIn(
                    name: "li.admin",
                    password: "correct horse battery",
                    code: Self.totp(typed: secret, at: api.clock.now),
                    address: "10.1.2.3"
                )
            else {
                Issue.record("locked out from another address")
                return
            }
            api.clock.advance(by: 901)
            if case .signedIn = try await operators.signIn(
                name: "li.admin",
                password: "correct horse battery",
                code: Self.totp(typed: secret, at: api.clock.now),
                address: "203.0.113.9"
            ) {
            } else {
                Issue.record("not signed in after the lock ran out")
            }
            try await operators.disable(name: "li.admin")
            await #expect(throws: OperatorError.disabled) {
                try await operators.signIn(name: "li.admin", password: "correct horse battery", code: nil)
            }
        }
    }

    @Test("a short password, a bad or taken name, are refused and nothing is stored")
    func refusals() async throws {
        try await TestServer.run { api in
            let operators = Operators(service: api.service)
            await #expect(throws: OperatorError.self) { try await operators.create(name: "wang", role: .viewer, password: "short pass") }
            await #expect(throws: OperatorError.self) {
                try await operators.create(name: "wang wei", role: .viewer, password: "correct horse battery")
            }
            _ = try await operators.create(name: "wang", role: .viewer, password: "correct horse battery")
            await #expect(throws: OperatorError.self) { try await operators.create(name: "wang", role: .admin, password: "correct horse battery") }
            #expect(try await operators.list().map(\.role) == [.viewer])
        }
    }

    @Test(
        "TOTP keys are sealed at rest: the database never holds one in clear, and a key an earlier version stored in clear is sealed at start-up and still works",
        arguments: StorageBackend.available
    )
    func totpKeysSealed(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let operators = Operators(service: api.service)
            _ = try await operators.create(name: "mei", role: .support, password: "correct horse battery", mustChangePassword: false)
            guard case .enrollTOTP(let typed, _, _) = try await operators.signIn(name: "mei", password: "correct horse battery", code: nil) else {
                Issue.record("no enrollment offered")
                return
            }
            func stored() async throws -> [String] {
                try await api.database.transaction { db in
                    try await db.operators.totpKeys().flatMap { [$0.secret, $0.pending].compactMap { $0 } }
                }
            }
            let secret = try #require(AuthenticatorApp(typed: typed)).key
            let rawKey = String(decoding: secret, as: UTF8.self)
            #expect(try await stored().allSatisfy { $0.hasPrefix("v1.") && !$0.contains(rawKey) }, "the pending key is sealed")
            let enrolledKey = try await Self.enroll("mei", with: operators, at: api.clock.now)
            let enrolledRaw = String(decoding: try #require(AuthenticatorApp(typed: enrolledKey)).key, as: UTF8.self)
            let enrolled = try await stored()
            #expect(enrolled.count == 1 && enrolled[0].hasPrefix("v1.") && !enrolled[0].contains(enrolledRaw), "the enrolled key is sealed")

            // An earlier version's row: the key in clear. Start-up seals it, and the operator's app still works.
            try await api.database.transaction { db in
                try await db.raw("UPDATE operators SET totp_secret = \(bind: enrolledRaw), totp_last_step = 0 WHERE name = 'mei'").run()
            }
            #expect(try await operators.sealLegacyTOTPKeys() == 1)
            #expect(try await operators.sealLegacyTOTPKeys() == 0, "once")
            #expect(try await stored().allSatisfy { $0.hasPrefix("v1.") })
            api.clock.advance(by: 30)
            guard
                case .signedIn = try await operators.signIn(
                    name: "mei",
                    password: "correct horse battery",
                    code: Self.totp(typed: enrolledKey, at: api.clock.now)
                )
            else {
                Issue.record("the resealed key does not sign in")
                return
            }
        }
    }

    @Test(
        "a code's step is compared where it is stored: of two requests racing with one code (both read the old last step), the second changes nothing",
        arguments: StorageBackend.available
    )
    func racedCode(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let operators = Operators(service: api.service)
            let mei = try await operators.create(name: "mei", role: .support, password: "correct horse battery", mustChangePassword: false)
            _ = try await Self.enroll("mei", with: operators, at: api.clock.now)
            let step = Int64(api.clock.now.timeIntervalSince1970 / 30)
            // The sign-in above stored this step; a racing request that read the row before it got here:
            let stored = try await api.database.transaction { db in try #require(try await db.operators.credentials(id: mei.id)) }
            let outcomes = try await api.database.transaction { db in
                [
                    try await db.operators.recordSignIn(mei.id, secret: stored.totpSecret ?? "", step: step, at: 0),
                    try await db.operators.recordStep(mei.id, step: step), try await db.operators.recordStep(mei.id, step: step + 1),
                ]
            }
            #expect(outcomes == [false, false, true], "the same step twice is refused; a later step is stored")
        }
    }
}
