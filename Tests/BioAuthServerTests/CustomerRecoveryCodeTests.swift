import BioAuthCore
import Foundation
import SQLKit
import Testing

@testable import BioAuthServer

/// The customer's own recovery codes (docs/PROTOCOL.md, "Binding a device"): made on a bound phone with a fresh Face ID,
/// shown once, stored only as HMACs under the server's pepper, each binding a new phone once with the password, which then
/// replaces every other device, passkey and session; a new set voids the old.
@Suite("Customers' recovery codes")
struct CustomerRecoveryCodeTests {
    @Test(
        "ten codes made with a fresh Face ID, shown once and stored only as HMACs; one binds the new phone with the password and ends everything else; used, voided, mistyped and another account's codes bind nothing",
        arguments: StorageBackend.available
    )
    func lostPhone(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let old = TestKey()
            let (oldPhone, _) = try await api.enrolled(old)
            // A password session of the same account cannot make them: a fresh device key is needed.
            let laptop = try await api.signIn(installation: "laptop")
            let stale = try await api.call(.post, "/v1/me/recovery-codes", token: laptop.access)
            #expect(stale.code == "step_up_required" && stale["action"] == "create_recovery_codes", "\(stale.raw)")

            let first = try await api.call(.post, "/v1/me/recovery-codes", token: oldPhone.access)
            #expect(first.status == 201 && first.headers[.cacheControl] == "no-store", "\(first.raw)")
            let voided = try #require(first.json["codes"] as? [String])
            let made = try await api.call(.post, "/v1/me/recovery-codes", token: oldPhone.access)
            let codes = try #require(made.json["codes"] as? [String])
            #expect(codes.count == 10 && Set(codes).count == 10 && Set(codes).isDisjoint(with: voided))
            #expect(codes.allSatisfy { $0.count == 19 && $0.split(separator: "-").count == 4 }, "\(codes)")
            let stored = try await api.snapshot()
            let text = stored.values.flatMap { $0 }.flatMap { $0.values }.joined(separator: " ")
            for code in codes + voided {
                #expect(!text.contains(code) && !text.contains(code.replacingOccurrences(of: "-", with: "")), "a code is stored in clear")
            }
            #expect(try await api.auditKinds().filter { $0 == "recovery_codes_created:success" }.count == 2)

            // Alice's phone is lost. On a new one: the password, then one code.
            let newPhone = try await api.signIn(installation: "phone-new")
            #expect(try await api.register(TestKey(), token: newPhone.access, evidence: ["recoveryCode": voided[0]]).code == "binding_code_invalid")
            #expect(
                try await api.register(TestKey(), token: newPhone.access, evidence: ["recoveryCode": "0000-0000-0000-0000"]).code
                    == "binding_code_invalid"
            )
            try await api.createAccount("mallory")
            let mallory = try await api.signIn("mallory", installation: "mallory-phone")
            #expect(try await api.register(TestKey(), token: mallory.access, evidence: ["recoveryCode": codes[1]]).code == "binding_code_invalid")
            let both = try await api.register(TestKey(), token: newPhone.access, evidence: ["recoveryCode": codes[0], "bindingCode": codes[1]])
            #expect(both.status == 400 && both.code == "malformed_request", "\(both.raw)")

            let key = TestKey()
            let bound = try await api.register(key, token: newPhone.access, evidence: ["recoveryCode": codes[0].lowercased()])
            #expect(bound.status == 201 && bound["boundBy"] == "recovery_code" && bound.json["coolingOffUntil"] == nil, "\(bound.raw)")
            #expect(try await api.call(.get, "/v1/me", token: oldPhone.access).code == "session_ended")
            #expect(try await api.call(.get, "/v1/me", token: laptop.access).code == "session_ended")
            #expect(try await api.signInChallenge(old).code == "device_revoked")
            #expect(try await api.auditKinds().contains("account_recovered:success"))

            // Every code of the set is void after the recovery, the used one too.
            let again = try await api.signIn(installation: "phone-third")
            #expect(try await api.register(TestKey(), token: again.access, evidence: ["recoveryCode": codes[0]]).code == "binding_code_invalid")
            #expect(try await api.register(TestKey(), token: again.access, evidence: ["recoveryCode": codes[2]]).code == "binding_code_invalid")
        }
    }

    @Test(
        "recovery codes tried are counted per account before they are looked at: the sixth in the window is refused, the right one too, and the password is not locked",
        arguments: StorageBackend.available
    )
    func guessesAreCounted(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let (phone, _) = try await api.enrolled(TestKey())
            let codes = try #require(try await api.call(.post, "/v1/me/recovery-codes", token: phone.access).json["codes"] as? [String])
            let thief = try await api.signIn(installation: "thief-phone")
            for guess in 0..<5 {
                let wrong = try await api.register(TestKey(), token: thief.access, evidence: ["recoveryCode": "0000-0000-0000-000\(guess)"])
                #expect(wrong.code == "binding_code_invalid", "\(wrong.raw)")
            }
            let limited = try await api.register(TestKey(), token: thief.access, evidence: ["recoveryCode": codes[0]])
            #expect(limited.status == 429 && limited.code == "rate_limited", "\(limited.raw)")
            #expect(try await api.call(.get, "/v1/me", token: phone.access).status == 200, "the phone is untouched")
            _ = try await api.signIn(installation: "laptop")  // the password is not locked
            // The window over, the code still works: the refusals used nothing up.
            api.clock.advance(by: api.service.configuration.binding.attemptWindow + 1)
            let again = try await api.signIn(installation: "new-phone")
            #expect(try await api.register(TestKey(), token: again.access, evidence: ["recoveryCode": codes[0]]).status == 201)
        }
    }

    @Test(
        "an account with no bound device makes no recovery codes, and a bank's binding code is not a recovery code",
        arguments: StorageBackend.available
    )
    func needsABoundDevice(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            try await api.createAccount()
            let session = try await api.signIn()
            let refused = try await api.call(.post, "/v1/me/recovery-codes", token: session.access)
            #expect(refused.status == 409 && refused.code == "no_bound_device", "\(refused.raw)")
            let phone = TestKey()
            #expect(try await api.register(phone, token: session.access).status == 201)
            let desk = AuthenticatedService(clientID: "test-binding-desk", scopes: ["bindings:write"])
            let bankCode = try await api.service.issueBindingCode(account: "alice", client: desk).code
            let other = try await api.signIn(installation: "phone-2")
            #expect(try await api.register(TestKey(), token: other.access, evidence: ["recoveryCode": bankCode]).code == "binding_code_invalid")
        }
    }
}
