import BioAuthCore
import Crypto
import Foundation
import HTTPTypes
import SQLKit
import Testing

@testable import BioAuthServer

/// Approving on the phone what started elsewhere: OpenID CIBA for the bank's backend (poll mode), with number matching
/// for sign-ins, exactly-once answers and the limits against push bombing.
@Suite("Approval requests (CIBA)")
struct ApprovalTests {
    /// A service client holding `approvals:write`, shown to customers as "Bank Call Centre".
    static func callCentre(_ api: API, name: String = "call-centre") async throws -> ServiceClients.Credentials {
        let clients = ServiceClients(database: api.database, clock: api.clock)
        let client = try await clients.create(name: name, scopes: ["approvals:write"])
        try await clients.setDisplayName(clientID: client.clientID, to: "Bank Call Centre")
        return client
    }

    @Test(
        "the call centre asks, the phone shows who asks and the message, approves with Face ID; the client collects a signed approval once",
        arguments: StorageBackend.available
    )
    func operationApproval(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let client = try await Self.callCentre(api)
            let key = TestKey()
            let (user, deviceID) = try await api.enrolled(key)
            let message = "Raise the daily transfer limit to ¥50,000"
            let asked = try await api.backchannel(client, ["login_hint": "alice", "binding_message": message])
            #expect(asked.status == 200 && asked.json["expires_in"] as? Int == 120 && asked.json["interval"] as? Int == 5, "\(asked.raw)")
            #expect(asked.json["match_number"] == nil, "an operation has no number to match")
            let handle = try #require(asked["auth_req_id"])

            let waiting = try await api.cibaToken(client, handle)
            #expect(waiting.status == 400 && waiting["error"] == "authorization_pending" && waiting.code == "authorization_pending", "\(waiting.raw)")

            let pending = try await api.call(.get, "/v1/approvals?status=pending", token: user.access)
            let listed = try #require((pending.json["approvals"] as? [[String: Any]])?.first)
            #expect(listed["requester"] as? String == "Bank Call Centre" && listed["bindingMessage"] as? String == message)
            #expect(listed["kind"] as? String == "operation" && listed["numberChoices"] == nil)

            let approved = try await api.approve(listed, key: key, counter: 1, token: user.access)
            #expect(approved.status == 200 && approved["status"] == "approved" && approved["deviceId"] == deviceID, "\(approved.raw)")
            let again = try await api.approve(listed, key: key, counter: 2, token: user.access)
            #expect(again.status == 409 && again.code == "approval_already_answered", "a replayed answer: \(again.raw)")

            // Ask before the interval has passed: slow_down, and the interval grows.
            let early = try await api.cibaToken(client, handle)
            #expect(early["error"] == "slow_down", "\(early.raw)")
            api.clock.advance(by: 11)
            let collected = try await api.cibaToken(client, handle)
            #expect(collected.status == 200 && collected.json["access_token"] == nil, "an operation hands over no session: \(collected.raw)")
            let signed = try #require(collected.json["signedApproval"] as? [String: Any])
            let approval = try JSONDecoder().decode(SignedApproval.self, from: JSONSerialization.data(withJSONObject: signed))
            #expect(approval.bindingMessage == message && approval.requester == "Bank Call Centre" && approval.amr == ["hwk", "face"])
            #expect(approval.deviceKeyId == key.keyID)
            let receiptKey = try await api.receiptKey()
            #expect(approval.isValid(signedBy: receiptKey), "verifiable offline with the published receipt key")
            var forged = approval
            forged.bindingMessage = "Raise the daily transfer limit to ¥500,000"
            #expect(!forged.isValid(signedBy: receiptKey), "a changed message breaks the signature")

            api.clock.advance(by: 20)
            let twice = try await api.cibaToken(client, handle)
            #expect(twice.status == 400 && twice["error"] == "invalid_grant", "collected once: \(twice.raw)")
            let kinds = try await api.auditKinds()
            #expect(kinds.contains("approval_requested:success") && kinds.contains("approval_approved:success"))
        }
    }

    @Test(
        "a sign-in shows a number on the channel; a phone that only taps yes cannot approve; the right number starts a session with amr mca",
        arguments: StorageBackend.available
    )
    func signInWithNumberMatching(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend) { api in
            let client = try await Self.callCentre(api)
            let key = TestKey()
            let (user, deviceID) = try await api.enrolled(key)

            // The attacker starts a sign-in and the customer, worn down, picks a number at random: a wrong pick denies.
            let attack = try await api.backchannel(client, ["login_hint": "alice"])
            let attackNumber = try #require(attack.json["match_number"] as? Int)
            let attackRequest = try #require(try await api.pendingApprovals(user.access).first)
            let choices = try #require(attackRequest["numberChoices"] as? [Int])
            #expect(choices.count == 3 && Set(choices).count == 3 && choices.contains(attackNumber))
            let listing = try await api.call(.get, "/v1/approvals", token: user.access).raw
            #expect(!listing.contains("match") && !listing.contains("\"\(attackNumber)\"") && !attackRequest.keys.contains("matchNumber"))
            let tapYes = try await api.approve(attackRequest, key: key, counter: 1, token: user.access, number: nil)
            #expect(tapYes.status == 400 && tapYes.code == "malformed_request", "no number, no approval: \(tapYes.raw)")
            let wrong = try #require(choices.first { $0 != attackNumber })
            let guessed = try await api.approve(attackRequest, key: key, counter: 2, token: user.access, number: wrong)
            #expect(guessed.status == 403 && guessed.code == "approval_number_mismatch", "\(guessed.raw)")
            let denied = try await api.call(.get, "/v1/approvals/\(try #require(attackRequest["approvalId"] as? String))", token: user.access)
            #expect(denied["status"] == "denied" && denied["denyReason"] == "number_mismatch")
            let retry = try await api.approve(attackRequest, key: key, counter: 3, token: user.access, number: attackNumber)
            #expect(retry.code == "approval_already_answered", "one guess only: \(retry.raw)")
            #expect(try await api.cibaToken(client, try #require(attack["auth_req_id"]))["error"] == "access_denied")

            // The customer's own sign-in: they read the number off the channel and pick it.
            let own = try await api.backchannel(client, ["login_hint": "alice"])
            let number = try #require(own.json["match_number"] as? Int)
            let request = try #require(try await api.pendingApprovals(user.access).first)
            let approved = try await api.approve(request, key: key, counter: 4, token: user.access, number: number)
            #expect(approved.status == 200 && approved["status"] == "approved", "\(approved.raw)")
            let tokens = try await api.cibaToken(client, try #require(own["auth_req_id"]))
            let access = try #require(tokens["access_token"], "\(tokens.raw)")
            #expect(tokens["refresh_token"] != nil && (tokens.json["signedApproval"] as? [String: Any])?["number"] as? Int == number)
            let me = try await api.call(.get, "/v1/me", token: access)
            #expect(me["signInMethod"] == "approval" && me["deviceId"] == deviceID, "\(me.raw)")
            // Asking again is invalid_grant, and changes nothing: the session handed over goes on.
            api.clock.advance(by: 11)
            #expect(try await api.cibaToken(client, try #require(own["auth_req_id"]))["error"] == "invalid_grant")
            #expect(try await api.call(.get, "/v1/me", token: access).status == 200, "a second collection does not end the first session")
            let introspector = try await ServiceClients(database: api.database, clock: api.clock).create(name: "api", scopes: ["sessions:introspect"])
            let introspectorToken = try #require(try await api.serviceToken(introspector)["access_token"])
            let seen = try await api.introspect(access, serviceToken: introspectorToken)
            #expect(seen.json["amr"] as? [String] == ["hwk", "face", "mca"] && seen["device_id"] == deviceID, "\(seen.raw)")
            #expect(try await api.call(.get, "/v1/me", token: user.access).status == 200, "the phone's own session goes on")
        }
    }

    @Test("refused: a changed message, another account's phone, a late answer, a signature for another purpose; nothing changes")
    func refusedAnswers() async throws {
        try await TestServer.run { api in
            let client = try await Self.callCentre(api)
            let key = TestKey()
            let (user, _) = try await api.enrolled(key)
            let mallory = TestKey()
            let (other, _) = try await api.enrolled(mallory, username: "mallory")
            _ = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Add payee Coffee Shop"])
            let request = try #require(try await api.pendingApprovals(user.access).first)
            let before = try await api.snapshot()

            var changed = request
            changed["bindingMessage"] = "Add payee Evil Corp"
            let mismatch = try await api.approve(request, key: key, counter: 1, token: user.access, shown: changed)
            #expect(mismatch.status == 401 && mismatch.code == "approval_mismatch", "\(mismatch.raw)")
            let otherPhone = try await api.approve(request, key: mallory, counter: 1, token: other.access)
            #expect(otherPhone.status == 404 && otherPhone.code == "approval_not_found", "\(otherPhone.raw)")
            let wrongKey = try await api.approve(request, key: mallory, counter: 1, token: user.access)
            #expect(wrongKey.code == "device_not_found", "another account's key: \(wrongKey.raw)")
            let login = try await api.approve(request, key: key, counter: 1, token: user.access, purpose: .login)
            #expect(login.status == 401 && login.code == "signature_purpose_mismatch" || login.code == "invalid_signature", "\(login.raw)")
            let changes = try await api.snapshot()
            #expect(
                changes["approvals"] == before["approvals"] && changes["devices"] == before["devices"],
                "no refused answer changes the request or counter"
            )

            api.clock.advance(by: 121)
            let late = try await api.approve(request, key: key, counter: 1, token: user.access)
            #expect(late.status == 410 && late.code == "approval_expired", "\(late.raw)")
            #expect(try await api.auditKinds().contains("approval_expired:success"))
        }
    }

    @Test(
        "200 outstanding requests polled at their interval from one address are never 429; guessing a client secret from it is",
        arguments: StorageBackend.available
    )
    func pollsAndGuesses(backend: StorageBackend) async throws {
        try await TestServer.run(
            backend: backend,
            configure: { configuration in
                configuration.approvals.maxPendingPerCustomer = 200
                configuration.approvals.requestsPerCustomer = 200
            },
            { api in
                let client = try await Self.callCentre(api)
                _ = try await api.enrolled(TestKey())
                var handles: [String] = []
                for index in 0..<200 {
                    let asked = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Operation \(index)"])
                    handles.append(try #require(asked["auth_req_id"], "\(asked.raw)"))
                }
                // Three rounds within one rate-limit window: 600 polls and 200 requests from one address.
                for round in 0..<3 {
                    for handle in handles {
                        let polled = try await api.cibaToken(client, handle)
                        #expect(polled["error"] == "authorization_pending", "round \(round): \(polled.raw)")
                    }
                    api.clock.advance(by: 5)
                }
                // Someone at that address trying secrets: 20 failures, then refused before the secret is checked, the
                // right one included, until the window ends.
                let guess = ServiceClients.Credentials(clientID: client.clientID, secret: "a guess")
                var refusals: [String] = []
                for _ in 0..<21 { refusals.append(try await api.cibaToken(guess, try #require(handles.first))["error"] ?? "") }
                #expect(refusals.prefix(20).allSatisfy { $0 == "invalid_client" } && refusals.last == "access_denied", "\(refusals)")
                let locked = try await api.cibaToken(client, try #require(handles.first))
                #expect(locked.status == 429 && locked.code == "rate_limited", "\(locked.raw)")
                api.clock.advance(by: 61)
                #expect(try await api.cibaToken(client, try #require(handles.first))["error"] == "authorization_pending")
            }
        )
    }

    @Test("a denial is handed over once, like an approval: access_denied, then invalid_grant", arguments: StorageBackend.available)
    func denialOnce(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let client = try await Self.callCentre(api)
            let (user, _) = try await api.enrolled(TestKey())
            let asked = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Add payee Coffee Shop"])
            let handle = try #require(asked["auth_req_id"])
            let request = try #require(try await api.pendingApprovals(user.access).first)
            let denied = try await api.call(.post, "/v1/approvals/\(try #require(request["approvalId"] as? String))/denial", token: user.access)
            #expect(denied["status"] == "denied", "\(denied.raw)")
            let first = try await api.cibaToken(client, handle)
            #expect(first.status == 400 && first["error"] == "access_denied", "\(first.raw)")
            api.clock.advance(by: 6)
            let second = try await api.cibaToken(client, handle)
            #expect(second.status == 400 && second["error"] == "invalid_grant", "collected once: \(second.raw)")
        }
    }

    @Test("a leading U+FEFF, which percent-decoding would drop unseen, is refused in a form, a query and a path, and nothing is written")
    func byteOrderMark() async throws {
        try await TestServer.run { api in
            let client = try await Self.callCentre(api)
            let (user, _) = try await api.enrolled(TestKey())
            let before = try await api.snapshot()
            // Encoded by the helper as %EF%BB%BF; then as raw bytes; then a mark inside the text, which reaches the rules.
            let encoded = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "\u{FEFF}Raise the limit"])
            #expect(encoded.status == 400 && encoded["error"] == "invalid_request", "\(encoded.raw)")
            let basic = Data("\(client.clientID):\(client.secret)".utf8).base64EncodedString()
            let raw = try await api.call(
                .post,
                "/bc-authorize",
                body: "scope=openid&login_hint=alice&binding_message=\u{FEFF}Raise",
                headers: [.contentType: "application/x-www-form-urlencoded", .authorization: "Basic \(basic)"]
            )
            #expect(raw.status == 400 && raw.code == "malformed_request", "\(raw.raw)")
            let inside = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Raise\u{FEFF} the limit"])
            #expect(inside.status == 400 && inside["error"] == "invalid_binding_message", "\(inside.raw)")
            let query = try await api.call(.get, "/v1/payments?status=%EF%BB%BFpending", token: user.access)
            #expect(query.status == 400 && query.code == "malformed_request", "\(query.raw)")
            let path = try await api.call(.get, "/v1/payments/%EF%BB%BF01a2aaaa-0000-7000-8000-000000000000", token: user.access)
            #expect(path.status == 400 && path.code == "malformed_request", "\(path.raw)")
            let changed = try await api.snapshot()
            #expect(changed["approvals"] == before["approvals"], "no request was made")
        }
    }

    @Test("the mark is found raw or percent-encoded, at the start of any value, and nowhere else")
    func byteOrderMarkScanner() {
        let form = ByteOrderMarkMiddleware.formSeparators
        let path = ByteOrderMarkMiddleware.pathSeparators
        #expect(ByteOrderMarkMiddleware.hasLeadingMark(Array("a=%EF%BB%BFx".utf8), separators: form))
        #expect(ByteOrderMarkMiddleware.hasLeadingMark(Array("a=%ef%bb%bf".utf8), separators: form))
        #expect(ByteOrderMarkMiddleware.hasLeadingMark(Array("a=\u{FEFF}x".utf8), separators: form))
        #expect(!ByteOrderMarkMiddleware.hasLeadingMark(Array("a=x\u{FEFF}".utf8), separators: form), "not at the start")
        #expect(ByteOrderMarkMiddleware.hasLeadingMark([0xEF, 0x25, 0x42, 0x42, 0xBF] + Array("=x".utf8), separators: form))
        #expect(ByteOrderMarkMiddleware.hasLeadingMark(Array("%EF%BB%BF=x".utf8), separators: form), "a name too")
        #expect(ByteOrderMarkMiddleware.hasLeadingMark(Array("/v1/x/%EF%BB%BFid".utf8), separators: path))
        #expect(!ByteOrderMarkMiddleware.hasLeadingMark(Array("a=x%EF%BB%BF&b=%EF%BB".utf8), separators: form))
        #expect(!ByteOrderMarkMiddleware.hasLeadingMark(Array("a=%E2%80%8B".utf8), separators: form), "other marks reach the rules")
    }

    @Test("push bombing is bounded: pending requests per customer, requests per customer; and CIBA's request errors")
    func limitsAndErrors() async throws {
        try await TestServer.run { api in
            let client = try await Self.callCentre(api)
            _ = try await api.enrolled(TestKey())
            for _ in 0..<3 { #expect(try await api.backchannel(client, ["login_hint": "alice"]).status == 200) }
            let fourth = try await api.backchannel(client, ["login_hint": "alice"])
            #expect(fourth.status == 429 && fourth.code == "approval_limit" && fourth["error"] == "access_denied", "\(fourth.raw)")
            api.clock.advance(by: 121)
            // The refused fourth counted too: five requests a window per customer, whatever their outcome.
            #expect(try await api.backchannel(client, ["login_hint": "ALICE"]).status == 200)
            let sixth = try await api.backchannel(client, ["login_hint": "alice"])
            #expect(sixth.status == 429 && sixth.code == "rate_limited", "five a window per customer: \(sixth.raw)")

            #expect(try await api.backchannel(client, ["login_hint": "nobody"])["error"] == "unknown_user_id")
            #expect(try await api.backchannel(client, ["login_hint": "alice"], scope: "profile")["error"] == "invalid_scope")
            let bidi = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Pay \u{202E}000,5¥"])
            #expect(bidi.status == 400 && bidi["error"] == "invalid_binding_message", "\(bidi.raw)")
            #expect(try await api.backchannel(client, ["login_hint": "alice", "client_notification_token": "t"])["error"] == "invalid_request")
            #expect(try await api.backchannel(client, [:])["error"] == "invalid_request")
            let payer = try await ServiceClients(database: api.database, clock: api.clock).create(name: "payer", scopes: ["payments:write"])
            #expect(try await api.backchannel(payer, ["login_hint": "alice"])["error"] == "unauthorized_client")
            let wrongSecret = ServiceClients.Credentials(clientID: client.clientID, secret: "not-the-secret")
            let refused = try await api.backchannel(wrongSecret, ["login_hint": "alice"])
            #expect(refused.status == 401 && refused["error"] == "invalid_client", "\(refused.raw)")
            // The client is checked before the parameters: without credentials, a malformed request is invalid_client too.
            let anonymous = try await api.call(
                .post,
                "/bc-authorize",
                body: "scope=&login_hint=",
                headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(anonymous.status == 401 && anonymous["error"] == "invalid_client", "\(anonymous.raw)")
            let anonymousPoll = try await api.call(
                .post,
                "/oauth/token",
                body: "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba",
                headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(anonymousPoll.status == 401 && anonymousPoll["error"] == "invalid_client", "\(anonymousPoll.raw)")
            #expect(try await api.cibaToken(payer, "someone-elses")["error"] == "unauthorized_client")
            #expect(try await api.cibaToken(client, "not-a-handle")["error"] == "invalid_grant")
        }
    }

    @Test("an expired request answers expired_token to its client and approval.expired is audited")
    func expiredRequest() async throws {
        try await TestServer.run { api in
            let client = try await Self.callCentre(api)
            _ = try await api.enrolled(TestKey())
            let asked = try await api.backchannel(client, ["login_hint": "alice", "requested_expiry": "30"])
            #expect(asked.json["expires_in"] as? Int == 30)
            api.clock.advance(by: 31)
            let expired = try await api.cibaToken(client, try #require(asked["auth_req_id"]))
            #expect(expired.status == 400 && expired["error"] == "expired_token", "\(expired.raw)")
            #expect(try await api.backchannel(client, ["login_hint": "alice", "requested_expiry": "601"])["error"] == "invalid_request")

            // Nobody reads one: the once-a-second sweep expires it all the same, and the bank hears of it.
            _ = try await api.backchannel(client, ["login_hint": "alice", "requested_expiry": "30"])
            api.clock.advance(by: 31)
            _ = try await WebhookDispatcher(service: api.service).runOnce()
            let states = try await api.database.transaction { db in
                try await db.raw("SELECT status FROM approvals").all().map { try $0.decode(column: "status", as: String.self) }
            }
            #expect(states == ["expired", "expired"])
            #expect(try await api.auditKinds().filter { $0 == "approval_expired:success" }.count == 2)
        }
    }
}

extension API {
    /// `POST /bc-authorize` with `credentials` in HTTP Basic.
    func backchannel(_ credentials: ServiceClients.Credentials, _ parameters: [String: String], scope: String = "openid") async throws -> Reply {
        var all = parameters
        all["scope"] = scope
        return try await form("/bc-authorize", all, credentials)
    }

    /// `POST /oauth/token` with the CIBA grant.
    func cibaToken(_ credentials: ServiceClients.Credentials, _ handle: String) async throws -> Reply {
        try await form("/oauth/token", ["grant_type": "urn:openid:params:grant-type:ciba", "auth_req_id": handle], credentials)
    }

    private func form(_ path: String, _ parameters: [String: String], _ credentials: ServiceClients.Credentials) async throws -> Reply {
        let body = parameters.sorted { $0.key < $1.key }.map { name, value in
            name + "=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }.joined(separator: "&")
        let basic = Data("\(credentials.clientID):\(credentials.secret)".utf8).base64EncodedString()
        return try await call(
            .post,
            path,
            body: body,
            headers: [.contentType: "application/x-www-form-urlencoded", .authorization: "Basic \(basic)"]
        )
    }

    /// The customer's pending requests, as the phone lists them.
    func pendingApprovals(_ token: String) async throws -> [[String: Any]] {
        (try await call(.get, "/v1/approvals?status=pending", token: token).json["approvals"] as? [[String: Any]]) ?? []
    }

    /// The published receipt key (the first).
    func receiptKey() async throws -> DevicePublicKey {
        let keys = try await call(.get, "/v1/receipt-keys").json["keys"] as? [[String: Any]]
        let encoded = try #require(keys?.first?["publicKey"] as? String)
        return try DevicePublicKey(x963Representation: try #require(Base64URL.decode(encoded)))
    }

    /// Approves `request` as a phone would: the canonical approval of what it shows (`shown`, the request by default)
    /// with the user's `number`, signed with `key`.
    func approve(
        _ request: [String: Any],
        key: TestKey,
        counter: UInt64,
        token: String,
        number: Int? = nil,
        shown: [String: Any]? = nil,
        purpose: SignedPayload.Purpose = .approval
    ) async throws -> Reply {
        let shown = shown ?? request
        let kind = try #require(CanonicalApproval.Kind(rawValue: shown["kind"] as? String ?? ""))
        let channel = shown["channel"] as? [String: String] ?? [:]
        let canonical = try CanonicalApproval(
            approvalID: try #require(shown["approvalId"] as? String),
            kind: kind,
            requester: try #require(shown["requester"] as? String),
            bindingMessage: shown["bindingMessage"] as? String ?? "",
            channel: .init(browser: channel["browser"] ?? "", platform: channel["platform"] ?? "", address: channel["address"] ?? ""),
            picked: number ?? 10,
            createdAtMs: try #require((shown["createdAtMs"] as? NSNumber)?.int64Value)
        )
        let payload = try SignedPayload(
            purpose: purpose,
            relyingPartyID: TestServer.relyingPartyID,
            challenge: try #require(Base64URL.decode(request["challenge"] as? String ?? "")),
            keyID: key.keyIDBytes,
            counter: counter,
            transactionHash: purpose.carriesHash ? canonical.hash : Data()
        )
        var body: [String: any Sendable] = [
            "keyId": key.keyID, "counter": Int64(counter), "approvalHash": Base64URL.encode(canonical.hash),
            "signature": Base64URL.encode(try key.privateKey.signature(for: payload.bytes).derRepresentation),
        ]
        if let number { body["number"] = number }
        return try await call(.post, "/v1/approvals/\(try #require(request["approvalId"] as? String))/approval", json: body, token: token)
    }
}

/// Scan to sign in: the web page's QR code becomes a sign-in request of whoever's phone scans it first, and only the
/// browser that showed it collects the session.
@Suite("Scan to sign in (QR)")
struct QRSignInTests {
    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.passkeys.webPageEnabled = true
        configuration.passkeys.origins = ["https://www.bank.example"]
        configuration.passkeys.relyingPartyName = "Bank Web"
    }

    @Test("scanned once, approved with the page's number, collected once by the browser that showed it", arguments: StorageBackend.available)
    func signIn(backend: StorageBackend) async throws {
        try await TestServer.run(.live, backend: backend, configure: Self.configure) { api in
            let key = TestKey()
            let (user, deviceID) = try await api.enrolled(key)
            let chrome = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
            let shown = try await api.call(.post, "/v1/qr-sign-ins", headers: [.userAgent: chrome])
            #expect(shown.status == 201 && shown["url"]?.hasPrefix("https://www.bank.example/web/q/") == true, "\(shown.raw)")
            #expect(shown["svg"]?.hasPrefix("<svg") == true && shown.headers[.cacheControl] == "no-store")
            let setCookie = try #require(shown.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Secure"), "\(setCookie)")
            let cookie = String(try #require(setCookie.split(separator: ";").first))
            let id = try #require(shown["qrSignInId"])
            let number = try #require(shown.json["matchNumber"] as? Int)
            func state(_ cookie: String?) async throws -> Reply {
                var headers: HTTPFields = [:]
                if let cookie { headers[.cookie] = cookie }
                return try await api.call(.post, "/v1/qr-sign-ins/\(id)/session", json: ["installationId": "web-1"], headers: headers)
            }
            #expect(try await state(cookie)["status"] == "waiting")

            let url = try #require(shown["url"])
            let scanned = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": url], token: user.access)
            #expect(scanned.status == 201 && scanned["requester"] == "Bank Web", "\(scanned.raw)")
            let channel = scanned.json["channel"] as? [String: String]
            #expect(channel?["browser"] == "Chrome" && channel?["platform"] == "macOS" && channel?["address"] != nil, "\(scanned.raw)")
            #expect((scanned.json["numberChoices"] as? [Int])?.contains(number) == true)
            let replayed = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": url], token: user.access)
            #expect(replayed.status == 409 && replayed.code == "qr_code_used", "each code once: \(replayed.raw)")
            #expect(try await state(cookie)["status"] == "scanned")

            // Another customer's phone cannot answer it.
            let bobKey = TestKey()
            let (bob, _) = try await api.enrolled(bobKey, username: "bob")
            let other = try await api.approve(scanned.json, key: bobKey, counter: 1, token: bob.access, number: number)
            #expect(other.status == 404 && other.code == "approval_not_found", "\(other.raw)")

            let approved = try await api.approve(scanned.json, key: key, counter: 1, token: user.access, number: number)
            #expect(approved.status == 200 && approved["status"] == "approved", "\(approved.raw)")
            let signedApproval = approved.json["signedApproval"] as? [String: Any]
            #expect(signedApproval?["channelBrowser"] as? String == "Chrome" && signedApproval?["number"] as? Int == number)

            // Another browser (no cookie, or its own) learns nothing and gets no session.
            let stranger = try await state(nil)
            #expect(stranger.status == 403 && stranger.code == "qr_browser_mismatch", "\(stranger.raw)")
            let otherPage = try await api.call(.post, "/v1/qr-sign-ins")
            let otherCookie = String(try #require(otherPage.headers[.setCookie]?.split(separator: ";").first))
            #expect(try await state(otherCookie).code == "qr_browser_mismatch")

            let collected = try await state(cookie)
            #expect(collected["status"] == "signed_in", "\(collected.raw)")
            let tokens = try #require(collected.json["tokens"] as? [String: Any])
            let me = try await api.call(.get, "/v1/me", token: try #require(tokens["accessToken"] as? String))
            #expect(me["signInMethod"] == "approval" && me["deviceId"] == deviceID && me["installationId"] == "web-1", "\(me.raw)")
            let again = try await state(cookie)
            #expect(again["status"] == "signed_in" && again.json["tokens"] == nil, "the tokens are handed over once")
            #expect(
                try await api.call(.get, "/v1/me", token: try #require(tokens["accessToken"] as? String)).status == 200,
                "and the session goes on"
            )
        }
    }

    @Test("refused: a code older than 30 seconds, one that is not the bank's, a wrong number (denied); off without the web page")
    func refusals() async throws {
        try await TestServer.run(configure: Self.configure) { api in
            let key = TestKey()
            let (user, _) = try await api.enrolled(key)
            let old = try await api.call(.post, "/v1/qr-sign-ins")
            api.clock.advance(by: 31)
            let late = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": try #require(old["url"])], token: user.access)
            #expect(late.status == 404 && late.code == "qr_code_not_found", "\(late.raw)")
            let foreign = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": "https://evil.example/web/q/abc"], token: user.access)
            #expect(foreign.code == "qr_code_not_found")

            let shown = try await api.call(.post, "/v1/qr-sign-ins")
            let cookie = String(try #require(shown.headers[.setCookie]?.split(separator: ";").first))
            let number = try #require(shown.json["matchNumber"] as? Int)
            let scanned = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": try #require(shown["url"])], token: user.access)
            let wrong = try #require((scanned.json["numberChoices"] as? [Int])?.first { $0 != number })
            let guessed = try await api.approve(scanned.json, key: key, counter: 1, token: user.access, number: wrong)
            #expect(guessed.code == "approval_number_mismatch")
            let state = try await api.call(
                .post,
                "/v1/qr-sign-ins/\(try #require(shown["qrSignInId"]))/session",
                json: ["installationId": "web-1"],
                headers: [.cookie: cookie]
            )
            #expect(state["status"] == "denied", "\(state.raw)")
        }
        try await TestServer.run { api in
            let (user, _) = try await api.enrolled(TestKey())
            // Without the web page, every QR endpoint says so, whatever it is asked.
            let off = try await api.call(.post, "/v1/qr-sign-ins")
            let scan = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": "https://www.bank.example/web/q/abc"], token: user.access)
            let session = try await api.call(
                .post,
                "/v1/qr-sign-ins/01a2aaaa-0000-7000-8000-000000000000/session",
                json: ["installationId": "web-1"]
            )
            for reply in [off, scan, session] {
                #expect(reply.status == 404 && reply.code == "qr_sign_in_disabled", "\(reply.raw)")
            }
        }
    }

    @Test("a live code inside any URL but this bank's own origin and path is not this bank's, and stays scannable")
    func codeOnlyAtItsOwnURL() async throws {
        try await TestServer.run(configure: Self.configure) { api in
            let (user, _) = try await api.enrolled(TestKey())
            let shown = try await api.call(.post, "/v1/qr-sign-ins")
            let url = try #require(shown["url"])
            #expect(url.hasPrefix("https://www.bank.example/web/q/"), "\(url)")
            let code = String(try #require(url.split(separator: "/").last))
            let elsewhere = [
                "https://evil.example/web/q/\(code)", "https://www.bank.example/other/\(code)", code, "javascript:alert(1)//\(code)",
                "https://www.bank.example.evil.example/web/q/\(code)", "https://WWW.BANK.EXAMPLE/web/q/\(code)", "\(url)/", "\(url)?x=1",
                "\(url)#x", "http://www.bank.example/web/q/\(code)", "https://www.bank.example/web/q/\(code.dropLast())%41",
                "https://evil.example/?https://www.bank.example/web/q/\(code)",
            ]
            let before = try await api.snapshot()
            for scanned in elsewhere {
                let reply = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": scanned], token: user.access)
                #expect(reply.status == 404 && reply.code == "qr_code_not_found", "\(scanned): \(reply.raw)")
            }
            #expect(try await api.snapshot() == before, "a refused scan changes nothing")
            let own = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": url], token: user.access)
            #expect(own.status == 201, "the code itself still works: \(own.raw)")
        }
    }

    @Test("the browser and platform a User-Agent names")
    func userAgents() {
        let cases: [(String, String, String)] = [
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
                "Edge", "Windows"
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
                "Safari", "iOS"
            ),
            ("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox", "Linux"),
            ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "Chrome", "Linux"),
            ("curl/8.5.0", "", ""),
        ]
        for (agent, browser, platform) in cases {
            #expect(UserAgentSummary(agent) == UserAgentSummary(browser: browser, platform: platform), "\(agent)")
        }
    }
}

/// OpenID CIBA's ping mode: the client's notification endpoint, a real receiver on loopback, is called with the bearer
/// token the client chose once the customer answers; a failed ping is tried again; the client then collects the outcome.
@Suite("CIBA ping mode")
struct CIBAPingTests {
    @Test(
        "the answer pings the client's endpoint with its token and auth_req_id; a failed ping is retried; the client collects",
        arguments: StorageBackend.available
    )
    func ping(backend: StorageBackend) async throws {
        let receiver = try await LoopbackWebhookReceiver.start()
        try await TestServer.run(
            .live,
            backend: backend,
            configure: Self.configure,
            { api in
                let clients = ServiceClients(database: api.database, clock: api.clock)
                let client = try await ApprovalTests.callCentre(api)
                try await clients.setNotificationEndpoint(clientID: client.clientID, to: receiver.url.absoluteString)
                let key = TestKey()
                let (user, _) = try await api.enrolled(key)
                let dispatcher = WebhookDispatcher(service: api.service)

                let tokenless = try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Add payee Tea Garden"])
                #expect(tokenless["error"] == "invalid_request", "a ping-mode client sends its token: \(tokenless.raw)")
                let asked = try await api.backchannel(
                    client,
                    ["login_hint": "alice", "binding_message": "Add payee Tea Garden", "client_notification_token": "ping-8f2e1c7a9b"]
                )
                let handle = try #require(asked["auth_req_id"], "\(asked.raw)")
                #expect(try await dispatcher.runOnce().attempted == 0, "nothing is owed before the customer answers")

                let request = try #require(try await api.pendingApprovals(user.access).first)
                #expect(try await api.approve(request, key: key, counter: 1, token: user.access).status == 200)
                #expect(try await dispatcher.runOnce().attempted == 1)
                let pinged = receiver.deliveries
                #expect(pinged.first?.authorization == "Bearer ping-8f2e1c7a9b")
                #expect(pinged.first?.json["auth_req_id"] as? String == handle && pinged.first?.json.count == 1, "only auth_req_id")
                #expect(try await dispatcher.runOnce().attempted == 0, "pinged once")
                let collected = try await api.cibaToken(client, handle)
                #expect(collected.status == 200 && collected.json["signedApproval"] != nil, "\(collected.raw)")

                // A denial pings too; a 503 is tried again after the backoff.
                receiver.script(.status(503))
                let second = try await api.backchannel(
                    client,
                    ["login_hint": "alice", "binding_message": "Add payee Coffee Shop", "client_notification_token": "ping-3c9d"]
                )
                let pending = try #require(try await api.pendingApprovals(user.access).first)
                let pendingID = try #require(pending["approvalId"] as? String)
                #expect(try await api.call(.post, "/v1/approvals/\(pendingID)/denial", token: user.access).status == 200)
                #expect(try await dispatcher.runOnce().attempted == 1)
                let failed = try await Self.ping(pendingID, api)
                #expect(failed?.attempts == 1 && failed?.delivered == false && failed?.lastError == "HTTP 503", "\(String(describing: failed))")
                #expect(try await dispatcher.runOnce().attempted == 0, "not before the backoff")
                api.clock.advance(by: 15)
                #expect(try await dispatcher.runOnce().attempted == 1)
                #expect(try await Self.ping(pendingID, api)?.delivered == true)
                // runOnce waits for each ping's answer: every request has arrived by now.
                #expect(receiver.deliveries.map(\.authorization) == ["Bearer ping-8f2e1c7a9b", "Bearer ping-3c9d", "Bearer ping-3c9d"])
                #expect(try await api.cibaToken(client, try #require(second["auth_req_id"]))["error"] == "access_denied")

                // Nobody answers: the expiry sweep expires it and the client is pinged all the same.
                let unanswered = try await api.backchannel(
                    client,
                    [
                        "login_hint": "alice", "binding_message": "Add payee Noodle Bar", "client_notification_token": "ping-77aa",
                        "requested_expiry": "30",
                    ]
                )
                api.clock.advance(by: 31)
                #expect(try await dispatcher.runOnce().attempted == 1, "the sweep expires it, then its ping is due")
                #expect(receiver.deliveries.last?.authorization == "Bearer ping-77aa")
                #expect(receiver.deliveries.last?.json["auth_req_id"] as? String == unanswered["auth_req_id"])
                #expect(try await api.cibaToken(client, try #require(unanswered["auth_req_id"]))["error"] == "expired_token")

                // A client without an endpoint polls: a token from it is refused.
                try await clients.setNotificationEndpoint(clientID: client.clientID, to: nil)
                let polling = try await api.backchannel(client, ["login_hint": "alice", "client_notification_token": "t"])
                #expect(polling["error"] == "invalid_request", "\(polling.raw)")
                await #expect(throws: ConfigurationError.self) {
                    try await clients.setNotificationEndpoint(clientID: client.clientID, to: "http://bank.example/ciba")
                }
            }
        )
        await receiver.stop()
    }

    @Test("a ping goes through the outbound rules: to the server's own network it is refused and never sent")
    func pingRefusedInside() async throws {
        let receiver = try await LoopbackWebhookReceiver.start()
        try await TestServer.run(
            .live,
            configure: Self.configureWithoutLoopback,
            { api in
                let client = try await ApprovalTests.callCentre(api)
                try await ServiceClients(database: api.database, clock: api.clock)
                    .setNotificationEndpoint(clientID: client.clientID, to: receiver.url.absoluteString)
                let key = TestKey()
                let (user, _) = try await api.enrolled(key)
                let asked = try await api.backchannel(
                    client,
                    ["login_hint": "alice", "binding_message": "Add payee Tea Garden", "client_notification_token": "ping-1"]
                )
                #expect(asked.status == 200, "\(asked.raw)")
                let request = try #require(try await api.pendingApprovals(user.access).first)
                #expect(try await api.approve(request, key: key, counter: 1, token: user.access).status == 200)
                #expect(try await WebhookDispatcher(service: api.service).runOnce().attempted == 1)
                let state = try await Self.ping(try #require(request["approvalId"] as? String), api)
                #expect(state?.delivered == false && state?.lastError?.contains("not an allowed destination") == true, "\(String(describing: state))")
                #expect(receiver.deliveries.isEmpty, "nothing reached the address inside")
            }
        )
        await receiver.stop()
    }

    /// Where the ping of request `approval` stands, as stored.
    static func ping(_ approval: String, _ api: API) async throws -> (attempts: Int, delivered: Bool, lastError: String?)? {
        try await api.database.transaction { db in
            guard
                let row = try await db.raw("SELECT attempts, delivered_at, last_error FROM ciba_pings WHERE approval_id = \(bind: approval)").first()
            else { return nil }
            return (
                try row.decode(column: "attempts", as: Int.self), try row.decode(column: "delivered_at", as: Int64?.self) != nil,
                try row.decode(column: "last_error", as: String?.self)
            )
        }
    }

    /// The background dispatcher off (the test drives it); deliveries to the receiver on loopback are allowed, as in every
    /// test server (`ServerConfiguration.forTests`).
    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.webhooks.pollInterval = 0
        configuration.webhooks.timeout = 5
    }

    /// ``configure(_:)`` with nothing allowed besides public destinations, as a deployment without `--outbound-allow`.
    static func configureWithoutLoopback(_ configuration: inout ServerConfiguration) {
        configure(&configuration)
        configuration.outbound.allowed = []
    }
}
