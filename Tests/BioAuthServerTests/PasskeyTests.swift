import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import HTTPTypes
import SQLKit
import Testing

@testable import BioAuthServer

/// Passkeys over real HTTP: registration from a signed-in session, sign-in with discoverable credentials and with an
/// allow list, the sessions they make, revocation, and the attacks a relying party must refuse.
@Suite("Passkeys")
struct PasskeyTests {
    static let rpID = TestServer.relyingPartyID
    static let origin = "https://" + TestServer.relyingPartyID

    static func run(_ backend: StorageBackend, _ body: @escaping @Sendable (API) async throws -> Void) async throws {
        try await TestServer.run(.live, backend: backend, configure: { $0.passkeys.origins = [origin] }, body)
    }

    @Test(
        "a signed-in customer creates a passkey, then signs in with it without typing a username and with one; the session says passkey everywhere",
        arguments: StorageBackend.available
    )
    func registerAndSignIn(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            try await api.createAccount()
            let password = try await api.signIn()
            let provider = SimulatedPasskeyProvider()
            let created = try await api.createPasskey(provider, token: password.access, name: "Alice's MacBook")
            #expect(created.status == 201, "\(created.raw)")
            #expect(
                created["name"] == "Alice's MacBook" && created.json["backupEligible"] as? Bool == true && created.json["backedUp"] as? Bool == true
            )
            #expect(
                created["attestationFormat"] == "none" && created["attestationType"] == "none" && created.json["attestationTrusted"] as? Bool == false
            )
            #expect(created.json["algorithm"] as? Int == -7)
            let passkeyID = try #require(created["passkeyId"])

            // The user handle is random, not the account id or the username.
            let handle = try #require(await provider.credentials.first?.userID)
            #expect(handle.count == 32)
            let me = try await api.call(.get, "/v1/me", token: password.access)
            #expect(!String(decoding: handle, as: UTF8.self).contains("alice") && Base64URL.encode(handle) != me["accountId"])

            // Discoverable: no username.
            let signedIn = try await api.passkeySignIn(provider)
            #expect(signedIn.status == 201, "\(signedIn.raw)")
            let session = try await api.call(.get, "/v1/me", token: signedIn["accessToken"] ?? "")
            #expect(session["signInMethod"] == "passkey" && session["passkeyId"] == passkeyID && session["username"] == "alice")
            #expect(session["installationId"] == "browser-1")

            // With a username: the allow list names the passkey.
            let options = try await api.call(.post, "/v1/sessions/passkey/options", json: ["username": "alice"])
            let allowed = try #require((options.json["publicKey"] as? [String: Any])?["allowCredentials"] as? [[String: Any]])
            #expect(allowed.count == 1 && allowed.first?["id"] as? String == created["credentialId"])
            #expect(try await api.passkeySignIn(provider, options: options).status == 201)

            // An unknown username gets the discoverable answer: it does not say whether the username exists.
            let unknown = try await api.call(.post, "/v1/sessions/passkey/options", json: ["username": "mallory"])
            #expect(unknown.status == 201 && ((unknown.json["publicKey"] as? [String: Any])?["allowCredentials"] as? [Any])?.isEmpty == true)

            // Listed with the account, and audited with the passkey id.
            let listed = try await api.call(.get, "/v1/passkeys", token: password.access)
            #expect((listed.json["passkeys"] as? [[String: Any]])?.first?["passkeyId"] as? String == passkeyID)
            let audit = try await api.call(.get, "/v1/audit", token: password.access)
            let events = try #require(audit.json["events"] as? [[String: Any]])
            #expect(events.filter { $0["kind"] as? String == "passkey_sign_in" && $0["passkeyId"] as? String == passkeyID }.count == 2)
            #expect(events.contains { $0["kind"] as? String == "passkey_registered" && $0["passkeyId"] as? String == passkeyID })
        }
    }

    @Test("introspection: a synced passkey is swk + user, a device-bound one hwk + user, with the passkey id", arguments: StorageBackend.available)
    func introspection(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let bank = try await ServiceClients(database: api.database, clock: api.clock).create(name: "gateway", scopes: ["sessions:introspect"])
            let service = try #require(try await api.serviceToken(bank)["access_token"])
            try await api.createAccount()
            let password = try await api.signIn()
            let synced = SimulatedPasskeyProvider()
            let deviceBound = SimulatedPasskeyProvider(behaviour: .init(synced: false, countsSignatures: true))
            #expect(try await api.createPasskey(synced, token: password.access).status == 201)
            let bound = try await api.createPasskey(deviceBound, token: password.access)
            #expect(bound.json["backupEligible"] as? Bool == false)

            for (provider, amr) in [(synced, ["swk", "user"]), (deviceBound, ["hwk", "user"])] {
                let tokens = try await api.passkeySignIn(provider)
                let found = try await api.introspect(try #require(tokens["accessToken"]), serviceToken: service)
                #expect(found.json["active"] as? Bool == true && found.json["amr"] as? [String] == amr, "\(found.raw)")
                #expect(found["passkey_id"] != nil)
            }
        }
    }

    @Test(
        "attacks: another origin, a replayed assertion, another user's credential, a forged user handle, no user verification, a counter going back",
        arguments: StorageBackend.available
    )
    func attacks(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            try await api.createAccount("alice")
            try await api.createAccount("bob")
            let alice = SimulatedPasskeyProvider(behaviour: .init(countsSignatures: true))
            let bob = SimulatedPasskeyProvider()
            #expect(try await api.createPasskey(alice, token: try await api.signIn("alice").access).status == 201)
            #expect(try await api.createPasskey(bob, token: try await api.signIn("bob").access).status == 201)

            // A phishing site's origin.
            await alice.setBehaviour(.init(origin: "https://bank-example.evil", countsSignatures: true))
            let phished = try await api.passkeySignIn(alice)
            #expect(phished.status == 403 && phished.code == "passkey_origin_mismatch")
            await alice.setBehaviour(.init(countsSignatures: true))

            // A replayed assertion: its challenge is used up, and on a new challenge it does not verify.
            let options = try await api.call(.post, "/v1/sessions/passkey/options", json: [:])
            let request = try await api.passkeySignInRequest(alice, options: options)
            #expect(try await api.call(.post, "/v1/sessions/passkey", json: request).status == 201)
            let replayed = try await api.call(.post, "/v1/sessions/passkey", json: request)
            #expect(replayed.status == 409 && replayed.code == "challenge_used")
            #expect(try await api.auditKinds().contains("challenge_replay:failure"), "the replay is audited")
            // A ceremony that outlives its 300 s is refused, the signature unchecked.
            let late = try await api.passkeySignInRequest(alice, options: try await api.call(.post, "/v1/sessions/passkey/options", json: [:]))
            api.clock.advance(by: api.service.configuration.passkeys.ceremonyLifetime + 1)
            let expired = try await api.call(.post, "/v1/sessions/passkey", json: late)
            #expect(expired.code == "challenge_expired", "\(expired.raw)")
            var moved = request
            moved["challengeId"] = try await api.call(.post, "/v1/sessions/passkey/options", json: [:])["challengeId"]
            let rebound = try await api.call(.post, "/v1/sessions/passkey", json: moved)
            #expect(rebound.status == 403 && rebound.code == "passkey_challenge_mismatch")

            // Alice's credential on a sign-in started for Bob.
            let forBob = try await api.call(.post, "/v1/sessions/passkey/options", json: ["username": "bob"])
            var crossed = try await api.passkeySignInRequest(alice, options: forBob, ignoreAllowList: true)
            let wrongUser = try await api.call(.post, "/v1/sessions/passkey", json: crossed)
            #expect(wrongUser.status == 401 && wrongUser.code == "passkey_unknown_credential")

            // Alice's credential claiming Bob's user handle.
            crossed = try await api.passkeySignInRequest(alice, options: try await api.call(.post, "/v1/sessions/passkey/options", json: [:]))
            var credential = try #require(crossed["credential"] as? [String: any Sendable])
            var response = try #require(credential["response"] as? [String: any Sendable])
            response["userHandle"] = Base64URL.encode(try #require(await bob.credentials.first?.userID))
            credential["response"] = response
            crossed["credential"] = credential
            let forgedHandle = try await api.call(.post, "/v1/sessions/passkey", json: crossed)
            #expect(forgedHandle.status == 403 && forgedHandle.code == "passkey_user_handle_mismatch", "\(forgedHandle.raw)")

            // A sign-in started without a username must carry the user handle (§7.2 step 6); with one, it may leave it out.
            var anonymous = try await api.passkeySignInRequest(alice, options: try await api.call(.post, "/v1/sessions/passkey/options", json: [:]))
            credential = try #require(anonymous["credential"] as? [String: any Sendable])
            response = try #require(credential["response"] as? [String: any Sendable])
            response["userHandle"] = nil
            credential["response"] = response
            anonymous["credential"] = credential
            let noHandle = try await api.call(.post, "/v1/sessions/passkey", json: anonymous)
            #expect(noHandle.status == 403 && noHandle.code == "passkey_user_handle_mismatch", "\(noHandle.raw)")
            var named = try await api.passkeySignInRequest(
                alice,
                options: try await api.call(.post, "/v1/sessions/passkey/options", json: ["username": "alice"])
            )
            credential = try #require(named["credential"] as? [String: any Sendable])
            response = try #require(credential["response"] as? [String: any Sendable])
            response["userHandle"] = nil
            credential["response"] = response
            named["credential"] = credential
            #expect(try await api.call(.post, "/v1/sessions/passkey", json: named).status == 201, "the user was named before the ceremony")

            // User verification is required.
            await alice.setBehaviour(.init(userVerified: false, countsSignatures: true))
            let unverified = try await api.passkeySignIn(alice)
            #expect(unverified.status == 403 && unverified.code == "passkey_user_not_verified")

            // A counter that does not grow (a cloned authenticator): the copy repeats the last counter the server stored.
            await alice.setBehaviour(.init(countsSignatures: true))
            #expect(try await api.passkeySignIn(alice).status == 201)
            let last = try #require(await alice.credentials.first?.counter)
            await alice.setBehaviour(.init(fixedCounter: last))
            let cloned = try await api.passkeySignIn(alice)
            #expect(cloned.status == 403 && cloned.code == "passkey_counter_replayed")

            // Each refusal is audited against the credential's account.
            let failures = try await api.database.transaction { db in
                try await db.raw("SELECT code FROM audit_events WHERE kind = 'passkey_sign_in' AND outcome = 'failure'").all()
                    .map { try $0.decode(column: "code", as: String?.self) ?? "" }
            }
            #expect(
                Set(failures).isSuperset(of: [
                    "passkey_origin_mismatch", "passkey_challenge_mismatch", "passkey_unknown_credential", "passkey_user_handle_mismatch",
                    "passkey_user_not_verified", "passkey_counter_replayed",
                ]),
                "\(failures)"
            )
        }
    }

    @Test(
        "revoking a passkey ends its sessions and refuses it from then on; revoking from the session it started keeps that session",
        arguments: StorageBackend.available
    )
    func revoke(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            try await api.createAccount()
            let password = try await api.signIn()
            let provider = SimulatedPasskeyProvider()
            let passkeyID = try #require(try await api.createPasskey(provider, token: password.access)["passkeyId"])
            let web = try #require(try await api.passkeySignIn(provider)["accessToken"])
            #expect(try await api.call(.delete, "/v1/passkeys/\(passkeyID)", token: password.access).status == 204)
            #expect(try await api.call(.get, "/v1/me", token: web).code == "session_ended")
            let refused = try await api.passkeySignIn(provider)
            #expect(refused.status == 401 && refused.code == "passkey_unknown_credential")
            #expect(try await api.call(.delete, "/v1/passkeys/\(passkeyID)", token: password.access).status == 204, "again: no error")
            let listed = try await api.call(.get, "/v1/passkeys", token: password.access)
            #expect((listed.json["passkeys"] as? [[String: Any]])?.first?["revokedAt"] != nil)
            let other = try await api.call(.delete, "/v1/passkeys/00000000-0000-0000-0000-000000000000", token: password.access)
            #expect(other.status == 404 && other.code == "passkey_not_found")
        }
    }

    @Test(
        "registration: the challenge belongs to the session that asked, is single use, and a credential registers once; bad input changes nothing",
        arguments: StorageBackend.available
    )
    func registrationChecks(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            try await api.createAccount("alice")
            try await api.createAccount("bob")
            let alice = try await api.signIn("alice")
            let bob = try await api.signIn("bob")
            let provider = SimulatedPasskeyProvider()

            let options = try await api.call(.post, "/v1/passkeys/registration-options", token: alice.access)
            let body = try await api.passkeyRegistrationBody(provider, options: options)
            let stolen = try await api.call(.post, "/v1/passkeys", json: body, token: bob.access)
            #expect(stolen.status == 400 && stolen.code == "challenge_mismatch", "\(stolen.raw)")
            #expect(try await api.call(.post, "/v1/passkeys", json: body, token: alice.access).status == 201)
            #expect(try await api.call(.post, "/v1/passkeys", json: body, token: alice.access).code == "challenge_used")

            // The same credential again, on a fresh challenge, is refused.
            let again = try await api.call(.post, "/v1/passkeys/registration-options", token: alice.access)
            let excluded = try #require((again.json["publicKey"] as? [String: Any])?["excludeCredentials"] as? [[String: Any]])
            #expect(excluded.count == 1)

            // Malformed input: clear errors, nothing written.
            let fresh = try await api.call(.post, "/v1/passkeys/registration-options", token: alice.access)
            var garbage = try await api.passkeyRegistrationBody(SimulatedPasskeyProvider(), options: fresh)
            var credential = try #require(garbage["credential"] as? [String: any Sendable])
            var response = try #require(credential["response"] as? [String: any Sendable])
            response["attestationObject"] = Base64URL.encode(Data("not cbor".utf8))
            credential["response"] = response
            garbage["credential"] = credential
            let malformed = try await api.call(.post, "/v1/passkeys", json: garbage, token: alice.access)
            #expect(malformed.status == 400 && malformed.code == "passkey_malformed")
            response["attestationObject"] = "not base64url!"
            credential["response"] = response
            garbage["credential"] = credential
            #expect(try await api.call(.post, "/v1/passkeys", json: garbage, token: alice.access).code == "invalid_encoding")
            let count = try await api.database.transaction { db in
                try await db.raw("SELECT COUNT(*) AS n FROM passkeys").first()!.decode(column: "n", as: Int.self)
            }
            #expect(count == 1)
        }
    }

    @Test("without passkey origins the endpoints answer passkeys_disabled")
    func disabled() async throws {
        try await TestServer.run(.live) { api in
            try await api.createAccount()
            let token = try await api.signIn().access
            let reply = try await api.call(.post, "/v1/passkeys/registration-options", token: token)
            #expect(reply.status == 404 && reply.code == "passkeys_disabled")
            #expect(try await api.call(.post, "/v1/sessions/passkey/options", json: [:]).code == "passkeys_disabled")
        }
    }
}

extension API {
    /// A base64url member of a reply.
    static func bytes(_ value: Any?) throws -> Data {
        let text = try #require(value as? String)
        return try #require(Base64URL.decode(text))
    }

    /// Options, the provider's new passkey, and its registration; returns the server's reply.
    func createPasskey(_ provider: SimulatedPasskeyProvider, token: String, name: String? = nil) async throws -> Reply {
        let options = try await call(.post, "/v1/passkeys/registration-options", token: token)
        try #require(options.status == 201, "registration options: \(options.raw)")
        var body = try await passkeyRegistrationBody(provider, options: options)
        if let name { body["name"] = name }
        return try await call(.post, "/v1/passkeys", json: body, token: token)
    }

    /// The RegistrationResponseJSON body for `options`, made by `provider`.
    func passkeyRegistrationBody(_ provider: SimulatedPasskeyProvider, options: Reply) async throws -> [String: any Sendable] {
        let publicKey = try #require(options.json["publicKey"] as? [String: Any])
        let user = try #require(publicKey["user"] as? [String: Any])
        let rp = try #require(publicKey["rp"] as? [String: Any])
        let excluded = (publicKey["excludeCredentials"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? String).flatMap(Base64URL.decode) }
        let registration = try await provider.register(
            PasskeyRegistrationRequest(
                relyingPartyID: try #require(rp["id"] as? String),
                challenge: try Self.bytes(publicKey["challenge"]),
                userID: try Self.bytes(user["id"]),
                userName: try #require(user["name"] as? String),
                excludedCredentialIDs: excluded
            )
        )
        let id = Base64URL.encode(registration.credentialID)
        return [
            "challengeId": try #require(options["challengeId"]),
            "credential": [
                "id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "platform", "clientExtensionResults": [String: String](),
                "response": [
                    "clientDataJSON": Base64URL.encode(registration.clientDataJSON),
                    "attestationObject": Base64URL.encode(registration.attestationObject),
                    "transports": registration.transports,
                ] as [String: any Sendable],
            ] as [String: any Sendable],
        ]
    }

    /// A passkey sign-in with fresh options (discoverable) or `options`.
    func passkeySignIn(_ provider: SimulatedPasskeyProvider, options: Reply? = nil, installation: String = "browser-1") async throws -> Reply {
        let issued: Reply
        if let options {
            issued = options
        } else {
            issued = try await call(.post, "/v1/sessions/passkey/options", json: [:])
        }
        return try await call(
            .post,
            "/v1/sessions/passkey",
            json: try await passkeySignInRequest(provider, options: issued, installation: installation)
        )
    }

    /// The AuthenticationResponseJSON body for `options`, made by `provider`.
    func passkeySignInRequest(
        _ provider: SimulatedPasskeyProvider,
        options: Reply,
        installation: String = "browser-1",
        ignoreAllowList: Bool = false
    )
        async throws -> [String: any Sendable]
    {
        try #require(options.status == 201, "sign-in options: \(options.raw)")
        let publicKey = try #require(options.json["publicKey"] as? [String: Any])
        let allowed =
            ignoreAllowList
            ? [] : (publicKey["allowCredentials"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? String).flatMap(Base64URL.decode) }
        let assertion = try await provider.assert(
            PasskeyAssertionRequest(
                relyingPartyID: try #require(publicKey["rpId"] as? String),
                challenge: try Self.bytes(publicKey["challenge"]),
                allowedCredentialIDs: allowed
            )
        )
        let id = Base64URL.encode(assertion.credentialID)
        var response: [String: any Sendable] = [
            "clientDataJSON": Base64URL.encode(assertion.clientDataJSON), "authenticatorData": Base64URL.encode(assertion.authenticatorData),
            "signature": Base64URL.encode(assertion.signature),
        ]
        if let handle = assertion.userHandle { response["userHandle"] = Base64URL.encode(handle) }
        return [
            "challengeId": try #require(options["challengeId"]), "installationId": installation,
            "credential": ["id": id, "rawId": id, "type": "public-key", "response": response] as [String: any Sendable],
        ]
    }
}

extension PasskeyTests {
    @Test(
        "support: the customer's passkeys and passkey sessions are shown; revoking one with a reason ends its sessions and is in the customer's audit log; a viewer cannot",
        arguments: StorageBackend.available
    )
    func supportRevokes(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let desk = try await SupportDeskTests.desk(api)
            try await api.createAccount()
            let password = try await api.signIn()
            let provider = SimulatedPasskeyProvider()
            let passkeyID = try #require(try await api.createPasskey(provider, token: password.access, name: "Work laptop")["passkeyId"])
            let web = try #require(try await api.passkeySignIn(provider)["accessToken"])

            let record = try await desk.customer("alice")
            #expect(record.passkeys.map(\.id) == [passkeyID] && record.passkeys[0].name == "Work laptop" && record.passkeys[0].backupEligible)
            #expect(record.sessions.contains { $0.method == "passkey" && $0.passkeyID == passkeyID })
            let overview = try await desk.overview(hours: 24)
            #expect(
                overview.hours.map(\.passkey).reduce(0, +) == 1 && overview.hours.map(\.password).reduce(0, +) == 1,
                "the overview counts the passkey sign-in apart"
            )

            await #expect(throws: SupportError.notAllowed("vic is a viewer: viewers only read")) {
                try await desk.revokePasskey(passkeyID, customer: "alice", operator: "vic", reason: "Laptop lost")
            }
            try await desk.revokePasskey(passkeyID, customer: "alice", operator: "mei", reason: "Laptop lost, call 4712")
            #expect(try await api.call(.get, "/v1/me", token: web).code == "session_ended")
            #expect(try await api.call(.get, "/v1/me", token: password.access).status == 200, "the password session stays")
            #expect(try await api.passkeySignIn(provider).code == "passkey_unknown_credential")
            let audit = try await api.call(.get, "/v1/audit", token: password.access)
            let revoked = try #require((audit.json["events"] as? [[String: Any]])?.first { $0["kind"] as? String == "passkey_revoked" })
            #expect(revoked["passkeyId"] as? String == passkeyID && revoked["reason"] as? String == "Laptop lost, call 4712")
            #expect(try await desk.customer("alice").passkeys[0].revokedAt != nil)
            await desk.close()
        }
    }
}

extension PasskeyTests {
    @Test("retention purges passkey ceremonies' challenges once expired, and keeps live ones", arguments: StorageBackend.available)
    func retention(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let old = try #require(try await api.call(.post, "/v1/sessions/passkey/options", json: [:])["challengeId"])
            api.clock.advance(by: 301)
            let live = try #require(try await api.call(.post, "/v1/sessions/passkey/options", json: [:])["challengeId"])
            let purged = try #require(try await Retention(database: api.database, configuration: api.service.configuration, clock: api.clock).purge())
            #expect(purged.counts[.passkeyChallenges] == 1)
            #expect(try await api.count("passkey_challenges", "id", old) == 0)
            #expect(try await api.count("passkey_challenges", "id", live) == 1)
        }
    }
}

extension PasskeyTests {
    @Test(
        "webhooks: the bank hears of every passkey added or revoked (by the customer or by support), signed, with the passkey's data",
        arguments: StorageBackend.available
    )
    func webhooks(backend: StorageBackend) async throws {
        try await WebhookTests.withSetup(
            backend: backend,
            events: ["passkey.registered", "passkey.revoked"],
            configure: { $0.passkeys.origins = [Self.origin] },
            { setup in
                let api = setup.api
                try await api.createAccount()
                let password = try await api.signIn()
                let laptop = try #require(
                    try await api.createPasskey(SimulatedPasskeyProvider(), token: password.access, name: "Laptop")["passkeyId"]
                )
                let key = try #require(
                    try await api.createPasskey(
                        SimulatedPasskeyProvider(behaviour: .init(synced: false, countsSignatures: true)),
                        token: password.access,
                        name: "Security key"
                    )["passkeyId"]
                )
                #expect(try await api.call(.delete, "/v1/passkeys/\(laptop)", token: password.access).status == 204)
                let desk = try await SupportDeskTests.desk(api)
                try await desk.revokePasskey(key, customer: "alice", operator: "mei", reason: "Key reported lost")
                await desk.close()
                #expect(try await setup.deliver().attempted == 4)

                let events = setup.receiver.acceptedEvents
                #expect(events.count == 4 && events.allSatisfy(\.verified))
                func data(_ type: String, _ passkey: String) -> [String: Any]? {
                    events.first { $0.eventType == type && ($0.json["data"] as? [String: Any])?["passkeyId"] as? String == passkey }?.json["data"]
                        as? [String: Any]
                }
                #expect(
                    data("passkey.registered", laptop)?["passkeyName"] as? String == "Laptop"
                        && data("passkey.registered", laptop)?["backupEligible"] as? Bool == true
                )
                #expect(data("passkey.registered", key)?["backupEligible"] as? Bool == false)
                #expect(data("passkey.revoked", laptop) != nil && data("passkey.revoked", key)?["accountId"] as? String != nil)
            }
        )
    }
}

extension PasskeyTests {
    @Test("the web page and its files carry the browser-page headers: its own script only, no framing, no sniffing, passkeys and nothing else")
    func webPageHeaders() async throws {
        try await TestServer.run(
            .live,
            configure: {
                $0.passkeys.origins = [Self.origin]
                $0.passkeys.webPageEnabled = true
            },
            { api in
                for path in ["/web", "/web/web.js", "/web/web.css"] {
                    let reply = try await api.call(.get, path)
                    #expect(reply.status == 200, "\(path)")
                    let policy = reply.headers[.contentSecurityPolicy] ?? ""
                    #expect(
                        policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"),
                        "\(path): \(policy)"
                    )
                    #expect(!policy.contains("unsafe-inline"))
                    #expect(reply.headers[HTTPField.Name("X-Frame-Options")!] == "DENY" && reply.headers[.xContentTypeOptions] == "nosniff")
                    #expect(reply.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
                    #expect(reply.headers[HTTPField.Name("Permissions-Policy")!]?.hasPrefix("publickey-credentials-get=(self)") == true)
                }
                #expect(try await api.call(.get, "/web").headers[.cacheControl] == "no-store")
            }
        )
    }
}

extension PasskeyTests {
    @Test(
        "claims refused with nothing written: a registration whose rawId names another credential, an id that is not its rawId, and a locked account's passkey sign-in",
        arguments: StorageBackend.available
    )
    func claimsRefused(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            try await api.createAccount()
            let password = try await api.signIn()
            let provider = SimulatedPasskeyProvider()
            #expect(try await api.createPasskey(provider, token: password.access).status == 201)

            // A second passkey whose rawId claims the first one's credential id (a victim's, say): the authenticator data
            // names another credential, so it is refused and nothing is stored.
            let victimID = try #require(await provider.credentials.first?.id)
            let options = try await api.call(.post, "/v1/passkeys/registration-options", token: password.access)
            var body = try await api.passkeyRegistrationBody(SimulatedPasskeyProvider(), options: options)
            var credential = try #require(body["credential"] as? [String: any Sendable])
            credential["id"] = Base64URL.encode(victimID)
            credential["rawId"] = Base64URL.encode(victimID)
            body["credential"] = credential
            let before = try await api.snapshot()
            #expect(before["passkeys"]?.count == 1 && before["passkey_challenges"] != nil, "the snapshot holds the passkey tables")
            let claimed = try await api.call(.post, "/v1/passkeys", json: body, token: password.access)
            #expect(claimed.status == 400 && claimed.code == "passkey_malformed", "\(claimed.raw)")
            #expect(try await api.snapshot()["passkeys"] == before["passkeys"])

            // id and rawId must be the same credential: refused before the challenge is touched.
            let again = try await api.call(.post, "/v1/passkeys/registration-options", token: password.access)
            var mismatched = try await api.passkeyRegistrationBody(SimulatedPasskeyProvider(), options: again)
            var other = try #require(mismatched["credential"] as? [String: any Sendable])
            other["id"] = Base64URL.encode(victimID)
            mismatched["credential"] = other
            let untouched = try await api.snapshot()
            let refused = try await api.call(.post, "/v1/passkeys", json: mismatched, token: password.access)
            #expect(refused.status == 400 && refused.code == "malformed_request", "\(refused.raw)")
            #expect(try await api.snapshot() == untouched)

            // Five wrong passwords lock the account: its passkey signs in no more until the lock ends.
            for _ in 0..<api.service.configuration.maxFailedPasswordAttempts {
                _ = try await api.call(.post, "/v1/sessions", json: ["username": "alice", "password": "wrong horse", "installationId": "phone-9"])
            }
            let sessions = try await api.snapshot()["sessions"]
            let locked = try await api.passkeySignIn(provider)
            #expect(locked.status == 423 && locked.code == "account_locked", "\(locked.raw)")
            #expect(try await api.snapshot()["sessions"] == sessions, "no session was started")
            api.clock.advance(by: api.service.configuration.accountLockDuration + 1)
            #expect(try await api.passkeySignIn(provider).status == 201)
        }
    }
}
