import BioAuthCore
import BioAuthTesting
import Foundation
import HTTPTypes
import SQLKit
import Testing

@testable import BioAuthServer

/// Which phone may be bound (docs/PROTOCOL.md, "Binding a device"): a phished password binds nothing on an account
/// that has a phone; a bound phone approves a new one with number matching, or the bank hands the customer a binding
/// code; a phone bound by a password alone starts in a cooling-off.
@Suite("Binding a device by policy")
struct DeviceBindingTests {
    /// A service client of the bank's backend that may ask for binding codes.
    static func bindingDesk(_ api: API) async throws -> String { try await PasswordResetTests.desk(api, scope: "bindings:write") }

    @Test(
        "a phished password on the attacker's phone binds nothing on an account that has a phone: refused with its own code, audited, nothing written",
        arguments: StorageBackend.available
    )
    func phishedPassword(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            _ = try await api.enrolled(TestKey())
            let attacker = try await api.signIn(installation: "attacker-phone")
            let before = try await api.snapshot()
            let refused = try await api.register(TestKey(), token: attacker.access, name: "iPhone (iPhone16,1)")
            #expect(refused.status == 403 && refused.code == "device_binding_required", "\(refused.raw)")
            let after = try await api.snapshot()
            #expect(after["devices"] == before["devices"], "no device was bound")
            #expect(try await api.auditKinds().last == "device_registered:failure")
            let code = try await api.database.transaction { db in
                try await db.raw("SELECT code FROM audit_events WHERE kind = 'device_registered' ORDER BY sequence DESC").first()?
                    .decode(column: "code", as: String?.self)
            }
            #expect(code == "device_binding_required")
        }
    }

    @Test(
        "a bound phone approves the new one by picking the number the new one shows; the approval binds that key once, for that session only",
        arguments: StorageBackend.available
    )
    func approvalOnBoundPhone(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let phone = TestKey()
            let (owner, phoneID) = try await api.enrolled(phone)
            let tablet = TestKey()
            let newSession = try await api.signIn(installation: "ipad-1")
            let asked = try await api.call(
                .post,
                "/v1/devices/binding-approvals",
                json: ["keyId": tablet.keyID, "biometryKind": "touchID", "deviceName": "Alice's iPad"],
                token: newSession.access,
                headers: [.userAgent: "BankApp/3.1 (iPad; iPadOS 18.1)"]
            )
            #expect(asked.status == 201, "\(asked.raw)")
            let number = try #require(asked.json["matchNumber"] as? Int)

            // The bound phone lists it with the new device, the platform it asks from and three numbers; never the match.
            let request = try #require(try await api.pendingApprovals(owner.access).first)
            #expect(request["kind"] as? String == "bind_device" && request["bindingMessage"] as? String == "Alice's iPad · Touch ID")
            #expect((request["channel"] as? [String: Any])?["platform"] as? String == "iPadOS")
            let choices = try #require(request["numberChoices"] as? [Int])
            #expect(choices.contains(number) && request["matchNumber"] == nil)

            // The new phone can neither bind before the answer nor approve its own request.
            let early = try await api.register(
                tablet,
                token: newSession.access,
                name: "Alice's iPad",
                evidence: ["approvalId": try #require(asked["approvalId"])]
            )
            #expect(early.status == 403 && early.code == "binding_approval_invalid", "\(early.raw)")
            let approved = try await api.approve(request, key: phone, counter: 1, token: owner.access, number: number)
            #expect(approved.status == 200 && approved["status"] == "approved", "\(approved.raw)")

            // Another session (the attacker's, with the same password) cannot use it, nor can another key.
            let attacker = try await api.signIn(installation: "attacker-phone")
            let stolen = try await api.register(tablet, token: attacker.access, evidence: ["approvalId": try #require(asked["approvalId"])])
            #expect(stolen.code == "binding_approval_invalid", "another session: \(stolen.raw)")
            let otherKey = try await api.register(TestKey(), token: newSession.access, evidence: ["approvalId": try #require(asked["approvalId"])])
            #expect(otherKey.code == "binding_approval_invalid", "another key: \(otherKey.raw)")

            let bound = try await api.register(
                tablet,
                token: newSession.access,
                name: "Alice's iPad",
                evidence: ["approvalId": try #require(asked["approvalId"])]
            )
            #expect(bound.status == 201 && bound["boundBy"] == "approval" && bound.json["coolingOffUntil"] == nil, "\(bound.raw)")
            let again = try await api.register(TestKey(), token: newSession.access, evidence: ["approvalId": try #require(asked["approvalId"])])
            #expect(again.code == "binding_approval_invalid", "an approval binds once: \(again.raw)")
            #expect(try await api.auditKinds().contains("device_registered:success"))
            #expect(phoneID != bound["deviceId"])
        }
    }

    @Test("the session that asked for a binding cannot approve it, even with a bound key: the approval must come from elsewhere")
    func noSelfApproval() async throws {
        try await TestServer.run { api in
            let phone = TestKey()
            let (session, _) = try await api.enrolled(phone)
            let asked = try await api.call(
                .post,
                "/v1/devices/binding-approvals",
                json: ["keyId": TestKey().keyID, "biometryKind": "faceID", "deviceName": "Another phone"],
                token: session.access
            )
            let number = try #require(asked.json["matchNumber"] as? Int, "\(asked.raw)")
            let request = try #require(try await api.pendingApprovals(session.access).first)
            let own = try await api.approve(request, key: phone, counter: 1, token: session.access, number: number)
            #expect(own.status == 403 && own.code == "binding_approval_invalid", "\(own.raw)")
            #expect(try await api.call(.get, "/v1/approvals/\(try #require(asked["approvalId"]))", token: session.access)["status"] == "pending")
        }
    }

    @Test("a wrong pick on the bound phone denies the request, and nothing binds with it")
    func wrongPick() async throws {
        try await TestServer.run { api in
            let phone = TestKey()
            let (owner, _) = try await api.enrolled(phone)
            let attacker = try await api.signIn(installation: "attacker-phone")
            let attackerKey = TestKey()
            let asked = try await api.call(
                .post,
                "/v1/devices/binding-approvals",
                json: ["keyId": attackerKey.keyID, "biometryKind": "faceID", "deviceName": "iPhone (iPhone16,1)"],
                token: attacker.access
            )
            let number = try #require(asked.json["matchNumber"] as? Int)
            let request = try #require(try await api.pendingApprovals(owner.access).first)
            let guess = try #require((request["numberChoices"] as? [Int])?.first { $0 != number })
            let picked = try await api.approve(request, key: phone, counter: 1, token: owner.access, number: guess)
            #expect(picked.status == 403 && picked.code == "approval_number_mismatch", "\(picked.raw)")
            let refused = try await api.register(attackerKey, token: attacker.access, evidence: ["approvalId": try #require(asked["approvalId"])])
            #expect(refused.code == "binding_approval_invalid", "\(refused.raw)")
            let none = try await api.call(
                .post,
                "/v1/devices/binding-approvals",
                json: ["keyId": TestKey().keyID, "biometryKind": "faceID", "deviceName": "iPhone"],
                token: try await api.enrolledElsewhere()
            )
            #expect(none.status == 409 && none.code == "no_bound_device", "an account without a phone has nothing to approve with: \(none.raw)")
        }
    }

    @Test(
        "a binding code from the bank binds one phone once, typed in any case; reused, expired, another account's or guessed codes are refused alike, and never locked the password",
        arguments: StorageBackend.available
    )
    func bindingCodes(backend: StorageBackend) async throws {
        let logs = LogSink()
        try await TestServer.run(.live, backend: backend, logLevel: .trace, logSink: logs) { api in
            _ = try await api.enrolled(TestKey())
            try await api.createAccount("bob")
            let desk = try await Self.bindingDesk(api)
            let issued = try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "alice"], token: desk)
            #expect(issued.status == 201 && issued.headers[.cacheControl] == "no-store", "\(issued.raw)")
            let code = try #require(issued["code"])
            #expect(code.count == 29 && code.split(separator: "-").count == 5, "five groups of five: \(code)")
            let bobCode = try #require(try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "bob"], token: desk)["code"])

            let newPhone = try await api.signIn(installation: "phone-2")
            let others = try await api.register(TestKey(), token: newPhone.access, evidence: ["bindingCode": bobCode])
            #expect(others.status == 403 && others.code == "binding_code_invalid", "bob's code binds nothing on alice's account: \(others.raw)")
            let typed = code.lowercased().replacingOccurrences(of: "-", with: " ")
            let bound = try await api.register(TestKey(), token: newPhone.access, evidence: ["bindingCode": typed])
            #expect(bound.status == 201 && bound["boundBy"] == "binding_code" && bound.json["coolingOffUntil"] == nil, "\(bound.raw)")
            let reused = try await api.register(TestKey(), token: newPhone.access, evidence: ["bindingCode": code])
            #expect(reused.code == "binding_code_invalid", "single use: \(reused.raw)")
            #expect(reused.raw.contains("mistyped, used or expired"), "one answer for every wrong code")

            let late = try #require(try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "alice"], token: desk)["code"])
            api.clock.advance(by: 601)
            let expired = try await api.register(
                TestKey(),
                token: try await api.signIn(installation: "phone-3").access,
                evidence: ["bindingCode": late]
            )
            #expect(expired.code == "binding_code_invalid", "at most 10 minutes: \(expired.raw)")

            // Guessing: five tries per account in the window, right or wrong, then 429; the password still works.
            // (The window is 15 minutes: let the tries above age out first.)
            api.clock.advance(by: 900)
            let guesser = try await api.signIn(installation: "guesser")
            var answers: [String] = []
            for _ in 0..<6 {
                answers.append(
                    try await api.register(TestKey(), token: guesser.access, evidence: ["bindingCode": "0000000000000000000000000"]).code ?? ""
                )
            }
            #expect(answers.filter { $0 == "binding_code_invalid" }.count == 5 && answers.last == "rate_limited", "\(answers)")
            #expect(
                try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "correct horse", "installationId": "x"]).status
                    == 201
            )

            // The code is nowhere but in the answer to the bank: not stored, logged, audited or sent to webhooks.
            let everything = try await api.snapshot().description
            for secret in [code, bobCode, late] {
                #expect(!everything.contains(secret) && !logs.text.contains(secret), "the code is kept only as a hash")
            }
            #expect(try await api.auditKinds().filter { $0 == "binding_code_issued:success" }.count == 3)
        }
    }

    @Test(
        "a lost phone: the bank's recovery code binds the new phone and, at once, every other device, passkey and session of the account is refused",
        arguments: StorageBackend.available
    )
    func lostPhone(backend: StorageBackend) async throws {
        try await PasskeyTests.run(backend) { api in
            let old = TestKey()
            let (oldPhone, _) = try await api.enrolled(old)
            let laptop = try await api.signIn(installation: "web-1")
            #expect(try await api.stepUp(old, counter: 1, session: laptop, action: "add_passkey").status == 200)
            let passkey = SimulatedPasskeyProvider()
            #expect(try await api.createPasskey(passkey, token: laptop.access).status == 201)
            let desk = try await Self.bindingDesk(api)
            let issued = try await api.call(.post, "/v1/service/recovery-codes", json: ["accountId": "alice"], token: desk)
            #expect(issued.status == 201 && issued["purpose"] == "recovery", "\(issued.raw)")
            let spare = try #require(try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "alice"], token: desk)["code"])

            let newPhone = try await api.signIn(installation: "phone-new")
            let key = TestKey()
            let bound = try await api.register(key, token: newPhone.access, evidence: ["bindingCode": try #require(issued["code"])])
            #expect(bound.status == 201 && bound["boundBy"] == "binding_code", "\(bound.raw)")

            // Everything else is refused at once: the old key, the old sessions and their refresh tokens.
            let oldSignIn = try await api.signInChallenge(old)
            #expect(oldSignIn.status == 403 && oldSignIn.code == "device_revoked", "\(oldSignIn.raw)")
            let passkeySignIn = try await api.passkeySignIn(passkey)
            #expect(passkeySignIn.status == 401 && passkeySignIn.code == "passkey_unknown_credential", "\(passkeySignIn.raw)")
            for ended in [oldPhone, laptop] {
                #expect(try await api.call(.get, "/v1/me", token: ended.access).code == "session_ended")
                let refreshed = try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": ended.refresh])
                #expect(refreshed.status == 401, "\(refreshed.raw)")
            }
            #expect(try await api.call(.get, "/v1/me", token: newPhone.access).status == 200, "the recovering session goes on")
            let spent = try await api.register(TestKey(), token: newPhone.access, evidence: ["bindingCode": spare])
            #expect(spent.code == "binding_code_invalid", "a code handed out before the recovery binds nothing: \(spent.raw)")
            let kinds = try await api.auditKinds()
            #expect(kinds.contains("account_recovered:success") && kinds.contains("device_revoked:success"))
            let signedIn = try await api.biometricSignIn(key, counter: 1)
            #expect(signedIn.status == 201, "the new phone signs in: \(signedIn.raw)")
        }
    }

    @Test("two recoveries at once with two codes: one binds its phone, the other binds nothing", arguments: StorageBackend.available)
    func concurrentRecoveries(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            _ = try await api.enrolled(TestKey())
            let desk = try await Self.bindingDesk(api)
            var codes: [String] = []
            for _ in 0..<2 {
                let issued = try await api.call(.post, "/v1/service/recovery-codes", json: ["accountId": "alice"], token: desk)
                codes.append(try #require(issued["code"]))
            }
            let first = try await api.signIn(installation: "phone-a")
            let second = try await api.signIn(installation: "phone-b")
            async let a = api.register(TestKey(), token: first.access, evidence: ["bindingCode": codes[0]])
            async let b = api.register(TestKey(), token: second.access, evidence: ["bindingCode": codes[1]])
            let replies = [try await a, try await b]
            // The other is refused either way: its session ended with the first recovery, or its code was void.
            #expect(replies.filter { $0.status == 201 }.count == 1, "\(replies.map(\.raw))")
            #expect(replies.contains { $0.code == "session_ended" || $0.code == "binding_code_invalid" }, "\(replies.map(\.raw))")
            let live = try await api.database.transaction { db in
                try await db.raw("SELECT COUNT(*) AS n FROM devices WHERE revoked_at IS NULL").first()?.decode(column: "n", as: Int.self)
            }
            #expect(live == 1, "one phone is left bound")
        }
    }

    @Test("two phones presenting one code at once: one binds, the other is refused")
    func concurrentCodes() async throws {
        try await TestServer.run(.live) { api in
            _ = try await api.enrolled(TestKey())
            let desk = try await Self.bindingDesk(api)
            let code = try #require(try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "alice"], token: desk)["code"])
            let first = try await api.signIn(installation: "phone-a")
            let second = try await api.signIn(installation: "phone-b")
            async let a = api.register(TestKey(), token: first.access, evidence: ["bindingCode": code])
            async let b = api.register(TestKey(), token: second.access, evidence: ["bindingCode": code])
            let statuses = [try await a.status, try await b.status].sorted()
            #expect(statuses == [201, 403], "\(statuses)")
        }
    }

    @Test(
        "a phone bound by a password alone cools off: it approves no sign-in elsewhere or new phone and pays up to the limit until the period ends, and introspection says so",
        arguments: StorageBackend.available
    )
    func coolingOff(backend: StorageBackend) async throws {
        try await TestServer.run(
            .live,
            backend: backend,
            configure: { configuration in
                configuration.binding.coolingOff = 3600
                configuration.binding.coolingOffPaymentLimit = 10_000
            },
            { api in
                let key = TestKey()
                let (user, _) = try await api.enrolled(key)
                let devices = try await api.call(.get, "/v1/devices", token: user.access)
                let device = try #require((devices.json["devices"] as? [[String: Any]])?.first)
                #expect(device["boundBy"] as? String == "password" && device["coolingOffUntil"] is String, "\(devices.raw)")
                // Support sees it too.
                let record = try await SupportDesk(service: api.service).customer("alice")
                #expect(record.devices.first?.boundBy == "password" && record.devices.first?.coolingOffUntil != nil)

                // No approvals of other channels' sign-ins, nor of new phones.
                let client = try await ApprovalTests.callCentre(api)
                let asked = try await api.backchannel(client, ["login_hint": "alice"])
                let number = try #require(asked.json["match_number"] as? Int)
                let request = try #require(try await api.pendingApprovals(user.access).first)
                let refused = try await api.approve(request, key: key, counter: 1, token: user.access, number: number)
                #expect(refused.status == 403 && refused.code == "device_cooling_off", "\(refused.raw)")
                #expect(Int(refused.headers[.retryAfter] ?? "") == 3600, "Retry-After says when it ends")
                #expect(
                    try await api.call(.get, "/v1/approvals/\(try #require(request["approvalId"] as? String))", token: user.access)["status"]
                        == "pending"
                )

                // Payments up to the limit: ¥88.00 is within ¥100.00, a second one past it is not, and stays pending.
                let first = try await api.payWithBiometrics(key, token: user.access, amountMinor: 8800, counter: 2)
                #expect(first.status == 200 && first["status"] == "authorized", "\(first.raw)")
                let second = try await api.payWithBiometrics(key, token: user.access, amountMinor: 8800, counter: 3)
                #expect(second.status == 403 && second.code == "device_cooling_off", "\(second.raw)")

                // Introspection of its biometric session says until when.
                let signedIn = try await api.biometricSignIn(key, counter: 4)
                let introspector = try await ServiceClients(database: api.database, clock: api.clock).create(
                    name: "api",
                    scopes: ["sessions:introspect"]
                )
                let token = try #require(try await api.serviceToken(introspector)["access_token"])
                let seen = try await api.introspect(try #require(signedIn["accessToken"]), serviceToken: token)
                #expect((seen.json["cooling_off_until"] as? Int).map { $0 > Int(api.clock.now.timeIntervalSince1970) } == true, "\(seen.raw)")

                // Once it ends, the phone approves.
                api.clock.advance(by: 3601)
                let fresh = try #require(try await api.biometricSignIn(key, counter: 5)["accessToken"])
                let later = try await api.backchannel(client, ["login_hint": "alice"])
                try #require(later.status == 200, "\(later.raw)")
                let laterNumber = try #require(later.json["match_number"] as? Int)
                let laterRequest = try #require(try await api.pendingApprovals(fresh).first)
                let approved = try await api.approve(laterRequest, key: key, counter: 6, token: fresh, number: laterNumber)
                #expect(approved.status == 200, "\(approved.raw)")
                let after = try await api.introspect(fresh, serviceToken: try #require(try await api.serviceToken(introspector)["access_token"]))
                #expect(after.json["active"] as? Bool == true && after.json["cooling_off_until"] == nil, "\(after.raw)")
            }
        )
    }

    @Test("a bank that binds first phones only with a code: the password alone binds nothing; the code binds without a cooling-off")
    func firstDeviceByCode() async throws {
        try await TestServer.run(configure: { $0.binding.firstDevice = .bindingCode }, Self.codeOnly)
    }

    /// `firstDeviceByCode`'s body.
    @Sendable static func codeOnly(_ api: API) async throws {
        try await api.createAccount()
        let session = try await api.signIn()
        let refused = try await api.register(TestKey(), token: session.access)
        #expect(refused.status == 403 && refused.code == "device_binding_required", "\(refused.raw)")
        let desk = try await Self.bindingDesk(api)
        let code = try #require(try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "alice"], token: desk)["code"])
        let bound = try await api.register(TestKey(), token: session.access, evidence: ["bindingCode": code])
        #expect(bound.status == 201 && bound["boundBy"] == "binding_code" && bound.json["coolingOffUntil"] == nil, "\(bound.raw)")
        let unknown = try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "nobody"], token: desk)
        #expect(unknown.status == 404 && unknown.code == "account_not_found", "\(unknown.raw)")
        let both = try await api.register(TestKey(), token: session.access, evidence: ["bindingCode": code, "approvalId": UUID().uuidString])
        #expect(both.status == 400 && both.code == "malformed_request", "\(both.raw)")
    }

    @Test("binding codes: 125 random bits in Crockford base32, read back from what a person types")
    func codeText() {
        let code = BindingCodeText.make(Data(repeating: 0xFF, count: 16))
        #expect(code == "ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ")
        #expect(BindingCodeText.make(Data(count: 16)) == "00000-00000-00000-00000-00000")
        #expect(BindingCodeText.canonical("zzzzz zzzzz-zzzzzzzzzz zzzzz") == code)
        #expect(BindingCodeText.canonical("OOOOO-IIIII-LLLLL-00000-11111") == "00000-11111-11111-00000-11111", "O reads as 0, I and L as 1")
        #expect(BindingCodeText.canonical("ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZ") == nil, "24 characters")
        #expect(BindingCodeText.canonical("ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZU") == nil, "U is not in the alphabet")
    }
}

extension API {
    /// A password session of another account (`carol`) that has no device.
    func enrolledElsewhere() async throws -> String {
        try await createAccount("carol")
        return try await signIn("carol", installation: "carol-phone").access
    }

    /// A payment to the coffee shop of `amountMinor`, authorized with `key`: the authorization's reply.
    func payWithBiometrics(_ key: TestKey, token: String, amountMinor: Int, counter: UInt64) async throws -> Reply {
        let payment = try await createPayment(token: token, amountMinor: amountMinor)
        try #require(payment.status == 201, "\(payment.raw)")
        return try await authorizeWithBiometrics(payment, key: key, counter: counter, token: token)
    }
}
