import BioAuthCore
import Foundation
import HummingbirdTesting
import Testing

@Suite("Server endpoints: happy paths")
struct EndpointTests {
    @Test("health and the OpenAPI document")
    func meta() async throws {
        try await TestServer.run { api in
            let health = try await api.call(.get, "/healthz")
            #expect(health.status == 200 && health["status"] == "ok")
            let document = try await api.call(.get, "/openapi.yaml")
            #expect(document.status == 200)
            #expect(document.raw.hasPrefix("openapi: 3.1.0"))
            #expect(document.raw.contains("/v1/sessions/biometric:"))
        }
    }

    @Test("account, password sign-in, me, refresh, sign-out")
    func accountsAndSessions() async throws {
        try await TestServer.run { api in
            let created = try await api.call(.post, "/v1/accounts", json: ["username": "Alice", "password": "correct horse"])
            #expect(created.status == 201)
            #expect(created["username"] == "alice")
            let tokens = try await api.signIn("ALICE")
            #expect(!tokens.access.isEmpty && !tokens.refresh.isEmpty && tokens.access != tokens.refresh)

            let me = try await api.call(.get, "/v1/me", token: tokens.access)
            #expect(me.status == 200)
            #expect(me["username"] == "alice" && me["installationId"] == "phone-1" && me["signInMethod"] == "password")
            #expect(me["sessionId"] == tokens.sessionID)

            let refreshed = try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": tokens.refresh])
            #expect(refreshed.status == 200)
            let next = Tokens(refreshed)
            #expect(next.sessionID == tokens.sessionID && next.access != tokens.access && next.refresh != tokens.refresh)
            #expect(try await api.call(.get, "/v1/me", token: tokens.access).code == "unauthenticated")
            #expect(try await api.call(.get, "/v1/me", token: next.access).status == 200)

            #expect(try await api.call(.delete, "/v1/sessions/current", token: next.access).status == 204)
            #expect(try await api.call(.get, "/v1/me", token: next.access).code == "session_ended")
            #expect(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": next.refresh]).code == "session_ended")
        }
    }

    @Test("device binding: challenge, register, list, biometric sign-in, revoke")
    func devices() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            try await api.createAccount()
            let tokens = try await api.signIn()
            let challenge = try await api.call(.post, "/v1/devices/challenges", token: tokens.access)
            #expect(challenge.status == 201 && challenge["purpose"] == "register" && challenge["relyingPartyId"] == "bank.example")
            #expect(Base64URL.decode(challenge["challenge"] ?? "")?.count == 32)

            let registered = try await api.register(key, token: tokens.access)
            #expect(registered.status == 201)
            #expect(registered["keyId"] == key.keyID && registered["installationId"] == "phone-1" && registered["attestation"] == "none")
            let deviceID = try #require(registered["deviceId"])

            let list = try await api.call(.get, "/v1/devices", token: tokens.access)
            let devices = try #require(list.json["devices"] as? [[String: Any]])
            #expect(devices.count == 1 && devices.first?["deviceName"] as? String == "Alice's iPhone")

            let signInChallenge = try await api.signInChallenge(key)
            #expect(signInChallenge.status == 201 && signInChallenge["purpose"] == "login" && signInChallenge["keyId"] == key.keyID)
            let signedIn = try await api.biometricSignIn(key, counter: 1, challenge: signInChallenge)
            #expect(signedIn.status == 201, "\(signedIn.raw)")
            let me = try await api.call(.get, "/v1/me", token: Tokens(signedIn).access)
            #expect(me["signInMethod"] == "biometric" && me["deviceId"] == deviceID && me["installationId"] == "phone-1")

            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: Tokens(signedIn).access).status == 204)
            let after = try await api.call(.get, "/v1/devices", token: try await api.signIn().access)
            #expect((after.json["devices"] as? [[String: Any]])?.first?["revokedAt"] is String)
        }
    }

    @Test("audit: the account's own events, newest first")
    func audit() async throws {
        try await TestServer.run { api in
            try await api.createAccount("bob")
            _ = try await api.signIn("bob")
            let (tokens, _) = try await api.enrolled(TestKey())
            let reply = try await api.call(.get, "/v1/audit?limit=10", token: tokens.access)
            #expect(reply.status == 200)
            let events = try #require(reply.json["events"] as? [[String: Any]])
            #expect(events.map { $0["kind"] as? String } == ["device_registered", "password_sign_in", "account_created"])
            #expect(events.allSatisfy { $0["outcome"] as? String == "success" })
            #expect(try await api.call(.get, "/v1/audit?limit=0", token: tokens.access).code == "malformed_request")
        }
    }

    @Test("a password's minimum counts characters, its maximum bytes: 8 Chinese characters (24 bytes) are a password")
    func passwordLengths() async throws {
        try await TestServer.run { api in
            try await api.createAccount("carol", password: "我的密码很长很好")
            _ = try await api.signIn("carol", password: "我的密码很长很好")
            let tooLong = try await api.call(.post, "/v1/accounts", json: ["username": "dave", "password": String(repeating: "密", count: 25)])
            #expect(tooLong.code == "invalid_password")
        }
    }

    @Test("changing the password ends every session; the new password works, the old does not")
    func changePassword() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let phone = try await api.signIn(installation: "phone-1")
            let tablet = try await api.signIn(installation: "tablet-1")
            let wrong = try await api.call(
                .put,
                "/v1/me/password",
                json: ["currentPassword": "nope nope", "newPassword": "new password 1"],
                token: phone.access
            )
            #expect(wrong.code == "invalid_credentials")
            let weak = try await api.call(
                .put,
                "/v1/me/password",
                json: ["currentPassword": "correct horse", "newPassword": "short"],
                token: phone.access
            )
            #expect(weak.code == "invalid_password")
            let changed = try await api.call(
                .put,
                "/v1/me/password",
                json: ["currentPassword": "correct horse", "newPassword": "new password 1"],
                token: phone.access
            )
            #expect(changed.status == 204)
            #expect(try await api.call(.get, "/v1/me", token: phone.access).code == "session_ended")
            #expect(try await api.call(.get, "/v1/me", token: tablet.access).code == "session_ended")
            #expect(
                try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "correct horse", "installationId": "x"]).code
                    == "invalid_credentials"
            )
            _ = try await api.signIn(password: "new password 1")
        }
    }
}
