import Foundation
import HummingbirdTesting
import Testing

@Suite("Passwords and sessions: attacks refused")
struct SessionSecurityTests {
    @Test("5 wrong passwords lock the account, even against the right one, until the lock expires")
    func lockout() async throws {
        try await TestServer.run(
            configure: { $0.accountLockDuration = 600 },
            { api in
                try await api.createAccount()
                func attempt(_ password: String) async throws -> Reply {
                    try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": password, "installationId": "p"])
                }
                for _ in 1...4 { #expect(try await attempt("wrong password").code == "invalid_credentials") }
                let fifth = try await attempt("wrong password")
                #expect(fifth.status == 423 && fifth.code == "account_locked")
                #expect(fifth.headers[.retryAfter] == "600", "the lock says how long it lasts: \(fifth.headers)")
                #expect(try await attempt("correct horse").code == "account_locked")
                api.clock.advance(by: 599)
                let last = try await attempt("correct horse")
                #expect(last.code == "account_locked" && last.headers[.retryAfter] == "1")
                api.clock.advance(by: 2)
                #expect(try await attempt("correct horse").status == 201)
                let kinds = try await api.auditKinds()
                #expect(kinds.filter { $0 == "password_sign_in:failure" }.count == 7)
                #expect(kinds.contains("account_locked:success"))
                #expect(kinds.last == "password_sign_in:success")
            }
        )
    }

    @Test("a success resets the count of wrong passwords")
    func successResets() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            for _ in 1...4 {
                _ = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "wrong password", "installationId": "p"])
            }
            _ = try await api.signIn()
            for _ in 1...4 {
                let reply = try await api.call(
                    .post,
                    "/v1/sessions",
                    json: ["username": "alice", "password": "wrong password", "installationId": "p"]
                )
                #expect(reply.code == "invalid_credentials")
            }
        }
    }

    @Test("an unknown username is answered exactly like a wrong password")
    func unknownUser() async throws {
        try await TestServer.run { api in
            let reply = try await api.call(.post, "/v1/sessions", json: ["username": "nobody", "password": "whatever1", "installationId": "p"])
            #expect(reply.status == 401 && reply.code == "invalid_credentials")
            #expect(reply["detail"] == "The username or the password is wrong.")
        }
    }

    @Test("reusing a rotated refresh token ends the whole session (the family)")
    func refreshReuse() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let first = try await api.signIn()
            let second = Tokens(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": first.refresh]))
            // An attacker replays the stolen first refresh token.
            let reuse = try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": first.refresh])
            #expect(reuse.status == 401 && reuse.code == "refresh_token_reused")
            // The legitimate holder's newer tokens are dead too.
            #expect(try await api.call(.get, "/v1/me", token: second.access).code == "session_ended")
            #expect(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": second.refresh]).code == "session_ended")
            #expect(try await api.auditKinds().contains("refresh_token_reuse:failure"))
        }
    }

    @Test("an expired access token says so; an expired refresh token is refused")
    func expiry() async throws {
        try await TestServer.run(
            configure: {
                $0.accessTokenLifetime = 900
                $0.refreshTokenLifetime = 3600
            },
            { api in
                try await api.createAccount()
                let tokens = try await api.signIn()
                api.clock.advance(by: 901)
                #expect(try await api.call(.get, "/v1/me", token: tokens.access).code == "token_expired")
                let refreshed = Tokens(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": tokens.refresh]))
                #expect(try await api.call(.get, "/v1/me", token: refreshed.access).status == 200)
                api.clock.advance(by: 3601)
                #expect(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": refreshed.refresh]).code == "invalid_refresh_token")
            }
        )
    }

    @Test("a new sign-in on the same installation ends the old session at once; other installations keep theirs")
    func oneSessionPerInstallation() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let old = try await api.signIn(installation: "phone-1")
            let tablet = try await api.signIn(installation: "tablet-1")
            let new = try await api.signIn(installation: "phone-1")
            #expect(try await api.call(.get, "/v1/me", token: old.access).code == "session_ended")
            #expect(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": old.refresh]).code == "session_ended")
            #expect(try await api.call(.get, "/v1/me", token: new.access).status == 200)
            #expect(try await api.call(.get, "/v1/me", token: tablet.access).status == 200)
        }
    }

    @Test("tokens the server never issued, and a missing token, are refused")
    func forgedTokens() async throws {
        try await TestServer.run { api in
            #expect(try await api.call(.get, "/v1/me").code == "unauthenticated")
            #expect(try await api.call(.get, "/v1/me", token: "forged").code == "unauthenticated")
            #expect(try await api.call(.get, "/v1/me", headers: [.authorization: "Basic YWxpY2U6cHc="]).code == "unauthenticated")
            #expect(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": "forged"]).code == "invalid_refresh_token")
            let reply = try await api.call(.get, "/v1/devices", token: String(repeating: "a", count: 10_000))
            #expect(reply.status == 401)
        }
    }

    @Test("the database holds no raw token and no password")
    func noSecretsStored() async throws {
        try await TestServer.run { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let refreshed = Tokens(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": tokens.refresh]))
            let biometric = Tokens(try await api.biometricSignIn(key, counter: 1))
            let secrets = [tokens.access, tokens.refresh, refreshed.access, refreshed.refresh, biometric.access, biometric.refresh, "correct horse"]
            let everything = try await api.snapshot().values.flatMap { $0 }.flatMap { $0.values }
            #expect(everything.count > 40)
            for secret in secrets {
                #expect(!everything.contains { $0.contains(secret) }, "a secret is stored in clear")
            }
            let hashes = try await api.snapshot()["accounts"]?.compactMap { $0["password_hash"] } ?? []
            #expect(hashes.count == 1 && hashes[0].hasPrefix("$2b$04$"))
        }
    }
}
