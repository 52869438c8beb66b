import BioAuthCore
import Foundation
import HTTPTypes
import SQLKit
import Testing

@testable import BioAuthServer

/// Assurance a bank's API can rely on (docs/PROTOCOL.md, "Step-up"): levels from evidence, the table of sensitive
/// operations walked whole, the step-up ceremony and its attacks, the drop-back, and introspection's acr and auth_time.
@Suite("Step-up and the table of sensitive operations")
struct StepUpTests {
    static func run(_ backend: StorageBackend, _ body: @escaping @Sendable (API) async throws -> Void) async throws {
        try await TestServer.run(.live, backend: backend, configure: { $0.passkeys.origins = [PasskeyTests.origin] }, body)
    }

    /// The request of each row that a step-up or a fresh sign-in can meet, sent by `session`; nil for rows met by the
    /// request's own proof. A row added to the table without a request here fails the walk.
    static func request(of row: SensitiveOperation, api: API, session: Tokens, otherDevice: String) async throws -> Reply? {
        switch row.action {
        case .changePassword?:
            return try await api.call(
                .put,
                "/v1/me/password",
                json: ["currentPassword": "correct horse", "newPassword": "battery staple"],
                token: session.access
            )
        case .setPaymentPIN?: return try await api.setPIN(token: session.access)
        case .addPasskey?: return try await api.call(.post, "/v1/passkeys/registration-options", token: session.access)
        case .revokeDevice?: return try await api.call(.delete, "/v1/devices/\(otherDevice)", token: session.access)
        case .revokePasskey?: return try await api.call(.delete, "/v1/passkeys/00000000-0000-4000-8000-000000000000", token: session.access)
        case .createRecoveryCodes?: return try await api.call(.post, "/v1/me/recovery-codes", token: session.access)
        case nil: return nil
        default:
            Issue.record("the table's row \(row.name) has no request in this test")
            return nil
        }
    }

    @Test("every operation a session calls is in one row of the table or said to be not sensitive, and every row's operations exist")
    func tableCoversTheContract() async throws {
        try await TestServer.run { api in
            let sessionOperations = try await ContractOperation.served(by: api).filter {
                if case .session = OperationPolicy.of($0.id)?.credential { return true }
                return false
            }.map(\.id)
            let inRows = SensitiveOperation.table.flatMap(\.operations)
            #expect(Set(inRows).count == inRows.count, "an operation is in one row")
            for id in sessionOperations {
                let rows = inRows.filter { $0 == id }.count
                let exempt = SensitiveOperation.notSensitive[id] != nil
                #expect(rows + (exempt ? 1 : 0) == 1, "\(id): in \(rows) rows, exempt: \(exempt)")
            }
            #expect(Set(inRows).union(SensitiveOperation.notSensitive.keys).isSubset(of: Set(sessionOperations)))
            #expect(
                SensitiveOperation.table.compactMap(\.action).sorted { $0.rawValue < $1.rawValue }
                    == StepUpAction.all.sorted { $0.rawValue < $1.rawValue }
            )
        }
    }

    @Test(
        "the table walked: each row refuses a password session on an account with a device (401, RFC 9470's WWW-Authenticate, nothing changed) and admits it after a step-up for that action",
        arguments: StorageBackend.available
    )
    func walkTheTable(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let other = try await api.bind(TestKey(), token: try await api.signIn(installation: "ipad").access, name: "Alice's iPad")
            let otherDevice = try #require(other["deviceId"], "\(other.raw)")
            var counter: UInt64 = 1
            // Changing the password ends every session: its row goes last.
            let rows = SensitiveOperation.table.filter { $0.metBy == .session && $0 != .changePassword } + [.changePassword]
            for row in rows {
                let session = try await api.signIn(installation: "phone-1")
                let before = try await api.snapshot()
                let refused = try #require(try await Self.request(of: row, api: api, session: session, otherDevice: otherDevice))
                #expect(refused.status == 401 && refused.code == "step_up_required", "\(row.name): \(refused.raw)")
                #expect(refused["acr_values"] == "urn:bioauth:acr:device-key" && refused.json["max_age"] as? Int == 300, "\(row.name)")
                #expect(refused["action"] == row.action?.rawValue, "\(row.name)")
                let challenge = try #require(refused.headers[.wwwAuthenticate])
                #expect(challenge.hasPrefix(#"Bearer error="insufficient_user_authentication""#), "\(challenge)")
                #expect(challenge.contains(#"acr_values="urn:bioauth:acr:device-key""#) && challenge.contains("max_age=300"), "\(challenge)")
                #expect(try await api.snapshot() == before, "\(row.name): a refusal changes nothing")

                // A step-up for another action does not count for this one.
                let elsewhere = try #require(StepUpAction.all.first { $0 != row.action })
                let wrong = try await api.stepUp(key, counter: counter, session: session, action: elsewhere.rawValue)
                counter += 1
                #expect(wrong.status == 200, "\(wrong.raw)")
                let still = try #require(try await Self.request(of: row, api: api, session: session, otherDevice: otherDevice))
                #expect(still.code == "step_up_required", "\(row.name): a step-up for \(elsewhere) is not for it")

                let stepped = try await api.stepUp(key, counter: counter, session: session, action: row.action?.rawValue ?? "")
                counter += 1
                #expect(stepped.status == 200 && stepped["acr"] == "urn:bioauth:acr:device-key" && stepped["action"] == row.action?.rawValue)
                let admitted = try #require(try await Self.request(of: row, api: api, session: session, otherDevice: otherDevice))
                // Admitted: done, or for the made-up passkey id, looked for and not found.
                let expected = row == .revokePasskey ? 404 : [.addPasskey, .createRecoveryCodes].contains(row.action) ? 201 : 204
                #expect(admitted.status == expected, "\(row.name): \(admitted.raw)")
            }
        }
    }

    @Test(
        "a step-up counts for its lifetime and then drops back: introspection's acr and auth_time follow it, the operation is refused again",
        arguments: StorageBackend.available
    )
    func dropBack(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let clients = ServiceClients(database: api.database, clock: api.clock)
            let gateway = try await clients.create(name: "api-gateway", scopes: ["sessions:introspect"])
            let key = TestKey()
            _ = try await api.enrolled(key)
            let session = try await api.signIn(installation: "phone-1")
            let signedInAt = Int(api.clock.now.timeIntervalSince1970)
            func introspected() async throws -> Reply {
                try await api.introspect(session.access, serviceToken: try #require(try await api.serviceToken(gateway)["access_token"]))
            }
            let plain = try await introspected()
            #expect(plain["acr"] == "urn:bioauth:acr:password" && plain.json["auth_time"] as? Int == signedInAt, "\(plain.raw)")
            #expect(plain.json["step_up_expires_at"] == nil && plain.json["device_key_id"] == nil)

            api.clock.advance(by: 60)
            let stepped = try await api.stepUp(key, counter: 1, session: session)
            #expect(stepped.status == 200, "\(stepped.raw)")
            let raised = try await introspected()
            let steppedAt = signedInAt + 60
            #expect(raised["acr"] == "urn:bioauth:acr:device-key" && raised.json["auth_time"] as? Int == steppedAt, "\(raised.raw)")
            #expect(raised.json["step_up_expires_at"] as? Int == steppedAt + 300 && raised["device_key_id"] == key.keyID)
            #expect(raised.json["factor_auth_times"] as? [String: Int] == ["pwd": signedInAt, "hwk": steppedAt])
            #expect(try await api.setPIN(token: session.access).status == 204, "within the step-up")

            api.clock.advance(by: 301)
            let dropped = try await introspected()
            #expect(dropped["acr"] == "urn:bioauth:acr:password" && dropped.json["auth_time"] as? Int == signedInAt, "\(dropped.raw)")
            #expect(
                dropped.json["step_up_expires_at"] == nil
                    && dropped.json["factor_auth_times"] as? [String: Int] == ["pwd": signedInAt, "hwk": steppedAt]
            )
            let refused = try await api.setPIN("135792", token: session.access)
            #expect(refused.code == "step_up_required", "the elevation dropped back: \(refused.raw)")
        }
    }

    @Test(
        "a Face ID sign-in meets the table while it is fresh, and not once it is older than the row's maximum age",
        arguments: StorageBackend.available
    )
    func freshSignIn(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let biometric = Tokens(try await api.biometricSignIn(key, counter: 1))
            #expect(try await api.setPIN(token: biometric.access).status == 204)
            api.clock.advance(by: 301)
            #expect(try await api.setPIN("135792", token: biometric.access).code == "step_up_required")
            #expect(try await api.stepUp(key, counter: 2, session: biometric).status == 200)
            #expect(try await api.setPIN("135792", token: biometric.access).status == 204)
            // Turning Face ID off on the phone in hand is not sensitive.
            let own = try await api.call(.get, "/v1/devices", token: biometric.access)
            let deviceID = try #require((own.json["devices"] as? [[String: Any]])?.first?["deviceId"] as? String)
            api.clock.advance(by: 301)
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: biometric.access).status == 204)
        }
    }

    @Test(
        "an account with nothing stronger than a password changes it with the current password; a password-only account needs no step-up",
        arguments: StorageBackend.available
    )
    func passwordOnlyAccount(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            try await api.createAccount()
            let session = try await api.signIn()
            api.clock.advance(by: 600)
            let changed = try await api.call(
                .put,
                "/v1/me/password",
                json: ["currentPassword": "correct horse", "newPassword": "battery staple"],
                token: session.access
            )
            #expect(changed.status == 204, "\(changed.raw)")
            let again = try await api.signIn(password: "battery staple")
            #expect(try await api.setPIN(token: again.access, password: "battery staple").status == 204)
            api.clock.advance(by: 301)
            let stale = try await api.call(.post, "/v1/passkeys/registration-options", token: again.access)
            #expect(stale.code == "step_up_required" && stale["acr_values"] == "urn:bioauth:acr:password", "a fresh password sign-in: \(stale.raw)")
        }
    }

    @Test(
        "step-up attacks: another session's signature, a signed action other than the one sent, another account's key, a replayed challenge, a forged signature; each refused, nothing raised",
        arguments: StorageBackend.available
    )
    func attacks(backend: StorageBackend) async throws {
        try await Self.run(backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let session = try await api.signIn(installation: "phone-1")
            let other = try await api.signIn(installation: "laptop")

            let otherSession = try await api.stepUp(key, counter: 1, session: session, signedSession: other.sessionID)
            #expect(otherSession.status == 401 && otherSession.code == "invalid_signature", "\(otherSession.raw)")
            let otherAction = try await api.stepUp(key, counter: 2, session: session, action: "set_payment_pin", signedAction: "revoke_device")
            #expect(otherAction.code == "invalid_signature", "\(otherAction.raw)")
            let unknownAction = try await api.stepUp(key, counter: 3, session: session, action: "transfer_everything")
            #expect(unknownAction.status == 400 && unknownAction.code == "malformed_request", "\(unknownAction.raw)")

            try await api.createAccount("mallory")
            let mallory = try await api.signIn("mallory", installation: "mallory-phone")
            let malloryKey = TestKey()
            #expect(try await api.register(malloryKey, token: mallory.access).status == 201)
            let foreign = try await api.stepUp(malloryKey, counter: 1, session: session)
            #expect(foreign.code == "device_not_found", "\(foreign.raw)")

            let forged = try await api.call(.post, "/v1/sessions/current/step-up/challenges", json: ["keyId": key.keyID], token: session.access)
            let forgedBody = try api.stepUpBody(key, challenge: forged, counter: 10, sessionID: session.sessionID, signer: TestKey())
            let forgedReply = try await api.call(.post, "/v1/sessions/current/step-up", json: forgedBody, token: session.access)
            #expect(forgedReply.code == "invalid_signature", "\(forgedReply.raw)")

            // The challenge was bound to the session: another session cannot use it.
            let issued = try await api.call(.post, "/v1/sessions/current/step-up/challenges", json: ["keyId": key.keyID], token: session.access)
            let crossedBody = try api.stepUpBody(key, challenge: issued, counter: 11, sessionID: other.sessionID)
            let crossed = try await api.call(.post, "/v1/sessions/current/step-up", json: crossedBody, token: other.access)
            #expect(crossed.status == 400 && crossed.code == "challenge_mismatch", "\(crossed.raw)")
            #expect(try await api.setPIN(token: session.access).code == "step_up_required", "no attack raised the session")
            #expect(try await api.setPIN(token: other.access).code == "step_up_required")
            let kinds = try await api.auditKinds()
            #expect(kinds.filter { $0 == "step_up:failure" }.count >= 3 && !kinds.contains("step_up:success"), "\(kinds)")

            // A good step-up; its challenge replayed is refused.
            let good = try await api.call(.post, "/v1/sessions/current/step-up/challenges", json: ["keyId": key.keyID], token: session.access)
            let body = try api.stepUpBody(key, challenge: good, counter: 20, sessionID: session.sessionID)
            #expect(try await api.call(.post, "/v1/sessions/current/step-up", json: body, token: session.access).status == 200)
            let replay = try await api.call(.post, "/v1/sessions/current/step-up", json: body, token: session.access)
            #expect(replay.status == 409 && replay.code == "challenge_used", "\(replay.raw)")
        }
    }
}
