import BioAuthCore
import Foundation
import HTTPTypes
import SQLKit
import Testing

@testable import BioAuthServer

/// The bank's backend: client credentials, service tokens, introspection, and the wall between service and user tokens.
@Suite("Service clients and introspection")
struct ServiceClientTests {
    @Test(
        "client credentials give a service token; wrong, unknown or disabled credentials are refused, and audited",
        arguments: StorageBackend.available
    )
    func tokens(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let bank = try await clients.create(name: "core-banking", scopes: ["sessions:introspect", "payments:write"])
            #expect(bank.clientID.hasPrefix("svc_"))

            let issued = try await api.serviceToken(bank)
            #expect(issued.status == 200, "\(issued.raw)")
            #expect(issued.headers[.cacheControl] == "no-store")
            #expect(issued["token_type"] == "Bearer" && issued.json["expires_in"] as? Int == 300)
            #expect(issued["scope"] == "payments:write sessions:introspect")
            #expect(try await api.serviceToken(bank, scope: "sessions:introspect")["scope"] == "sessions:introspect")

            let wrong = try await api.serviceToken(.init(clientID: bank.clientID, secret: "not-the-secret"))
            #expect(wrong.status == 401 && wrong.code == "invalid_client")
            #expect(wrong.headers[.wwwAuthenticate] == #"Basic realm="bioauth""#)
            let unknown = try await api.serviceToken(.init(clientID: "svc_unknown", secret: bank.secret))
            #expect(unknown.code == "invalid_client")
            // Client ids cannot be probed: an unknown id and a known one with a wrong secret get the same answer.
            #expect(unknown.status == wrong.status && unknown.json["detail"] as? String == wrong.json["detail"] as? String, "\(unknown.raw)")
            #expect(
                try await api.call(
                    .post,
                    "/oauth/token",
                    body: "grant_type=client_credentials",
                    headers: [.contentType: "application/x-www-form-urlencoded"]
                ).code == "invalid_client"
            )
            #expect(try await api.serviceToken(bank, grantType: "password").code == "unsupported_grant_type")
            #expect(try await api.serviceToken(bank, scope: "webhooks:write").code == "invalid_scope", "not granted to this client")
            #expect(try await api.serviceToken(bank, scope: "everything").code == "invalid_scope")

            try await clients.disable(clientID: bank.clientID)
            let disabled = try await api.serviceToken(bank)
            #expect(disabled.code == "invalid_client" && disabled.json["detail"] as? String == wrong.json["detail"] as? String)
            let token = try #require(issued["access_token"])
            #expect(try await api.introspect("anything", serviceToken: token).code == "invalid_service_token", "a disabled client's tokens stop")

            let audited = try await api.database.transaction { db in
                try await db.raw("SELECT outcome, code FROM audit_events WHERE kind = 'service_token_issued' AND client_id = \(bind: bank.clientID)")
                    .all()
            }
            #expect(audited.count == 6, "2 issued, 4 refused for this client (an unknown client has no client id to audit)")
            #expect(try audited.filter { try $0.decode(column: "outcome", as: String.self) == "failure" }.count == 4)
            let stored = try await api.database.transaction { db in try await db.raw("SELECT secret_hash FROM service_client_secrets").all() }
            #expect(try stored.allSatisfy { try $0.decode(column: "secret_hash", as: String.self) != bank.secret }, "only hashes are stored")
        }
    }

    @Test(
        "introspection: a password session is pwd, a Face ID sign-in hwk + face with its device; ended, expired and unknown tokens are inactive and nothing more",
        arguments: StorageBackend.available
    )
    func introspection(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let bank = try await clients.create(name: "api-gateway", scopes: ["sessions:introspect"])
            let service = try #require(try await api.serviceToken(bank)["access_token"])

            let key = TestKey()
            let (password, deviceID) = try await api.enrolled(key)
            let me = try await api.call(.get, "/v1/me", token: password.access)
            let seen = try await api.introspect(password.access, serviceToken: service)
            #expect(seen.status == 200 && seen.json["active"] as? Bool == true, "\(seen.raw)")
            #expect(seen["sub"] == me["accountId"] && seen["username"] == "alice" && seen["sid"] == password.sessionID)
            #expect(seen.json["amr"] as? [String] == ["pwd"] && seen["token_type"] == "access_token")
            let exp = try #require(seen.json["exp"] as? Int)
            let iat = try #require(seen.json["iat"] as? Int)
            #expect(exp - iat == 900)

            let biometric = Tokens(try await api.biometricSignIn(key, counter: 1))
            let byFace = try await api.introspect(biometric.access, serviceToken: service)
            #expect(byFace.json["amr"] as? [String] == ["hwk", "face"] && byFace["device_id"] == deviceID)
            #expect(byFace.json["app_attest"] as? Bool == false)

            // The password session was replaced by the biometric one on the same installation: ended.
            let ended = try await api.introspect(password.access, serviceToken: service)
            #expect(ended.json.count == 1 && ended.json["active"] as? Bool == false, "\(ended.raw)")
            #expect(try await api.introspect("no-such-token", serviceToken: service).raw == #"{"active":false}"#)
            api.clock.advance(by: 901)
            #expect(try await api.introspect(biometric.access, serviceToken: service).code == "invalid_service_token", "it lived 300 s")
            let fresh = try #require(try await api.serviceToken(bank)["access_token"])
            #expect(try await api.introspect(biometric.access, serviceToken: fresh).raw == #"{"active":false}"#, "the access token expired")
        }
    }

    @Test("a user's token never works on a service endpoint, nor a service token on a user's; a token without the scope is refused")
    func separation() async throws {
        try await TestServer.run { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let payments = try await clients.create(name: "payments", scopes: ["payments:write"])
            let paymentsToken = try #require(try await api.serviceToken(payments)["access_token"])
            let user = try await api.enrolled(TestKey()).0

            let asUser = try await api.introspect(user.access, serviceToken: user.access)
            #expect(asUser.status == 401 && asUser.code == "invalid_service_token")
            #expect(try await api.introspect(user.access, serviceToken: nil).code == "invalid_service_token")
            let lacking = try await api.introspect(user.access, serviceToken: paymentsToken)
            #expect(lacking.status == 403 && lacking.code == "insufficient_scope")
            #expect(try await api.call(.get, "/v1/me", token: paymentsToken).code == "unauthenticated")
            #expect(try await api.call(.get, "/v1/payments", token: paymentsToken).code == "unauthenticated")
        }
    }

    @Test("service tokens are limited per client; failed authentications per address, unknown ids included; refusals are counted")
    func tokenRateLimit() async throws {
        try await TestServer.run(
            configure: { configuration in
                configuration.serviceTokenRequestsPerClient = 2
                configuration.clientAuthenticationFailuresPerAddress = 3
            },
            { api in
                let clients = ServiceClients(database: api.database, clock: api.clock)
                let bank = try await clients.create(name: "core-banking", scopes: ["sessions:introspect"])
                let batch = try await clients.create(name: "batch-jobs", scopes: ["sessions:introspect"])
                // Per client: two tokens for the bank, and the batch client behind the same address still gets its own.
                #expect(try await api.serviceToken(bank).status == 200)
                #expect(try await api.serviceToken(bank).status == 200)
                let limited = try await api.serviceToken(bank)
                #expect(limited.status == 429 && limited.code == "rate_limited", "\(limited.raw)")
                #expect(limited.headers[.retryAfter].flatMap(Int.init).map { (1...60).contains($0) } == true, "\(limited.headers)")
                #expect(try await api.serviceToken(batch).status == 200, "another client behind the same address")
                // Failures per address: an id that is no client's counts too, so guessing ids gains nothing.
                #expect(try await api.serviceToken(.init(clientID: "svc_guessed", secret: "guess-1")).code == "invalid_client")
                #expect(try await api.serviceToken(.init(clientID: bank.clientID, secret: "guess-2")).code == "invalid_client")
                #expect(try await api.serviceToken(.init(clientID: bank.clientID, secret: "guess-3")).code == "invalid_client")
                let guessing = try await api.serviceToken(.init(clientID: bank.clientID, secret: "guess-4"))
                #expect(guessing.status == 429 && guessing.code == "rate_limited", "refused before the secret is checked: \(guessing.raw)")
                #expect(try await api.serviceToken(batch).status == 429, "the address is refused, right credentials included")
                api.clock.advance(by: 61)
                #expect(try await api.serviceToken(bank).status == 200, "a new window")
                let text = String(decoding: try #require(api.service.metrics.exposition()), as: UTF8.self)
                #expect(text.contains(#"bioauth_rate_limit_refusals_total{limit="oauth_token"} 3"#), "\(text)")
            }
        )
    }

    @Test("a secret rotation: both secrets work until it is finished, then only the new one")
    func rotation() async throws {
        try await TestServer.run { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let old = try await clients.create(name: "ledger", scopes: ["sessions:introspect"])
            let new = try await clients.rotateSecret(clientID: old.clientID)
            #expect(try await api.serviceToken(old).status == 200)
            #expect(try await api.serviceToken(new).status == 200)
            await #expect(throws: ConfigurationError.self) { try await clients.rotateSecret(clientID: old.clientID) }
            try await clients.finishRotation(clientID: old.clientID)
            #expect(try await api.serviceToken(old).code == "invalid_client")
            #expect(try await api.serviceToken(new).status == 200)
            let listed = try await clients.list()
            #expect(listed.map(\.name) == ["ledger"] && listed.first?.secrets == 1 && listed.first?.scopes == ["sessions:introspect"])
        }
    }

    @Test("client names and scopes are checked when a client is made")
    func creationChecks() async throws {
        try await TestServer.run { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            for (name, scopes) in [("", ["sessions:introspect"]), ("has space", ["sessions:introspect"]), ("ok", []), ("ok", ["admin"])] {
                await #expect(throws: ConfigurationError.self) { _ = try await clients.create(name: name, scopes: scopes) }
            }
            _ = try await clients.create(name: "twice", scopes: ["payees:write"])
            await #expect(throws: ConfigurationError.self) { _ = try await clients.create(name: "twice", scopes: ["payees:write"]) }
        }
    }
}

extension API {
    /// `POST /oauth/token` with `credentials` in HTTP Basic.
    func serviceToken(_ credentials: ServiceClients.Credentials, grantType: String = "client_credentials", scope: String? = nil) async throws -> Reply
    {
        var form = "grant_type=\(grantType)"
        if let scope { form += "&scope=" + (scope.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
        let basic = Data("\(credentials.clientID):\(credentials.secret)".utf8).base64EncodedString()
        return try await call(
            .post,
            "/oauth/token",
            body: form,
            headers: [.contentType: "application/x-www-form-urlencoded", .authorization: "Basic \(basic)"]
        )
    }

    /// `POST /oauth/introspect` of `token` with `serviceToken` as the bearer.
    func introspect(_ token: String, serviceToken: String?) async throws -> Reply {
        try await call(
            .post,
            "/oauth/introspect",
            body: "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
            token: serviceToken,
            headers: [.contentType: "application/x-www-form-urlencoded"]
        )
    }
}
