import BioAuthCore
import Foundation
import Testing

@testable import BioAuthServer

/// Forgot password (docs/PROTOCOL.md, "Binding a device"): the bank's backend asks for a reset code after its own check
/// of the customer; the customer sets a new password with it; every session ends, and no device is bound or unbound.
@Suite("Forgot password")
struct PasswordResetTests {
    /// A service token of the bank's backend holding `scope`.
    static func desk(_ api: API, scope: String) async throws -> String {
        let client = try await ServiceClients(database: api.database, clock: api.clock).create(name: "desk-\(scope.prefix(5))", scopes: [scope])
        return try #require(try await api.serviceToken(client)["access_token"])
    }

    @Test(
        "the bank's reset code sets a new password once: every session ends, the old password is refused, the device stays bound, the lock is lifted",
        arguments: StorageBackend.available
    )
    func reset(backend: StorageBackend) async throws {
        let logs = LogSink()
        try await TestServer.run(.live, backend: backend, logLevel: .trace, logSink: logs) { api in
            let key = TestKey()
            let (phone, deviceID) = try await api.enrolled(key)
            for _ in 0..<5 {
                _ = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "wrong password", "installationId": "x"])
            }
            let locked = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "correct horse", "installationId": "x"])
            #expect(locked.code == "account_locked", "\(locked.raw)")

            let desk = try await Self.desk(api, scope: "passwords:reset")
            let issued = try await api.call(.post, "/v1/service/password-reset-codes", json: ["accountId": "alice"], token: desk)
            #expect(issued.status == 201 && issued.headers[.cacheControl] == "no-store", "\(issued.raw)")
            let code = try #require(issued["code"])
            let binding = try await api.call(.post, "/v1/service/binding-codes", json: ["accountId": "alice"], token: desk)
            #expect(binding.status == 403 && binding.code == "insufficient_scope", "a reset desk binds no device: \(binding.raw)")

            let wrongUser = try await api.call(
                .post,
                "/v1/password-resets",
                json: ["username": "bob", "code": code, "newPassword": "new horse battery"]
            )
            #expect(wrongUser.status == 403 && wrongUser.code == "reset_code_invalid", "\(wrongUser.raw)")
            let reset = try await api.call(
                .post,
                "/v1/password-resets",
                json: ["username": "Alice", "code": code.lowercased(), "newPassword": "new horse battery"]
            )
            #expect(reset.status == 204, "\(reset.raw)")
            let again = try await api.call(
                .post,
                "/v1/password-resets",
                json: ["username": "alice", "code": code, "newPassword": "third horse battery"]
            )
            #expect(again.code == "reset_code_invalid", "single use: \(again.raw)")

            #expect(try await api.call(.get, "/v1/me", token: phone.access).code == "session_ended", "every session ended")
            let old = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "correct horse", "installationId": "x"])
            #expect(old.code == "invalid_credentials", "\(old.raw)")
            let fresh = try await api.signIn(password: "new horse battery", installation: "laptop")
            // A reset binds nothing and unbinds nothing: the phone still signs in with its key, and a reset code binds no phone.
            let signedIn = try await api.biometricSignIn(key, counter: 1)
            #expect(signedIn.status == 201, "\(signedIn.raw)")
            let devices = try await api.call(.get, "/v1/devices", token: fresh.access)
            #expect((devices.json["devices"] as? [[String: Any]])?.map { $0["deviceId"] as? String } == [deviceID])
            let late = try #require(try await api.call(.post, "/v1/service/password-reset-codes", json: ["accountId": "alice"], token: desk)["code"])
            let bind = try await api.register(TestKey(), token: fresh.access, evidence: ["bindingCode": late])
            #expect(bind.code == "binding_code_invalid", "a reset code binds no device: \(bind.raw)")
            #expect(!logs.text.contains(code) && !logs.text.contains(late))
            let kinds = try await api.auditKinds()
            #expect(kinds.contains("password_reset_code_issued:success") && kinds.contains("password_reset:success"))
            #expect(kinds.contains("password_reset:failure"))
        }
    }

    @Test("a flood of wrong reset codes, an unknown username's included, never reaches the password hash; the right code hashes once")
    func wrongCodesCostNoHash() async throws {
        try await TestServer.run(.live, configure: { $0.metricsPort = 0 }, Self.countHashes)
    }

    /// `wrongCodesCostNoHash`'s body.
    @Sendable static func countHashes(_ api: API) async throws {
        try await api.createAccount()
        let port = try #require(await api.metricsPorts.first { _ in true })
        let hashes = { try await MetricsTests.scrape(port).value("bioauth_password_hash_wait_seconds_count") ?? 0 }
        let before = try await hashes()
        for username in ["alice", "alice", "nobody-here"] {
            let guess = ["username": username, "code": "0000000000000000000000000", "newPassword": "new horse battery"]
            #expect(try await api.call(.post, "/v1/password-resets", json: guess).code == "reset_code_invalid")
        }
        #expect(try await hashes() == before, "no hash for a code that cannot be used")
        let desk = try await Self.desk(api, scope: "passwords:reset")
        let code = try #require(try await api.call(.post, "/v1/service/password-reset-codes", json: ["accountId": "alice"], token: desk)["code"])
        #expect(
            try await api.call(.post, "/v1/password-resets", json: ["username": "alice", "code": code, "newPassword": "new horse battery"]).status
                == 204
        )
        #expect(try await hashes() == before + 1)
    }

    @Test("reset codes tried: five per account in the window, then 429; a weak new password is refused before any code is used")
    func guesses() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let desk = try await Self.desk(api, scope: "passwords:reset")
            let code = try #require(try await api.call(.post, "/v1/service/password-reset-codes", json: ["accountId": "alice"], token: desk)["code"])
            let weak = try await api.call(.post, "/v1/password-resets", json: ["username": "alice", "code": code, "newPassword": "short"])
            #expect(weak.status == 400 && weak.code == "invalid_password", "\(weak.raw)")
            var answers: [String] = []
            for _ in 0..<6 {
                let guess = ["username": "alice", "code": "0000000000000000000000000", "newPassword": "new horse battery"]
                answers.append(try await api.call(.post, "/v1/password-resets", json: guess).code ?? "")
            }
            #expect(answers.prefix(5).allSatisfy { $0 == "reset_code_invalid" } && answers.last == "rate_limited", "\(answers)")
            #expect(
                try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "correct horse", "installationId": "x"]).status
                    == 201
            )
        }
    }
}
