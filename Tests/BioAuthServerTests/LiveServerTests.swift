import Foundation
import HummingbirdTesting
import Testing

@Suite("Over a real socket")
struct LiveServerTests {
    @Test("the whole story over TCP: account, password, bind the device, biometric sign-in, revoke")
    func story() async throws {
        try await TestServer.run(.live) { api in
            let key = TestKey()
            let (tokens, deviceID) = try await api.enrolled(key)
            let signedIn = try await api.biometricSignIn(key, counter: 1)
            #expect(signedIn.status == 201)
            #expect(try await api.call(.get, "/v1/me", token: Tokens(signedIn).access)["signInMethod"] == "biometric")
            #expect(try await api.call(.get, "/v1/me", token: tokens.access).code == "session_ended")
            let laptop = try await api.signIn(installation: "laptop")
            #expect(try await api.stepUp(key, counter: 2, session: laptop).status == 200)
            #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: laptop.access).status == 204)
            #expect(try await api.signInChallenge(key).code == "device_revoked")
        }
    }

    @Test("20 concurrent uses of one signed challenge: exactly one session")
    func concurrentReplay() async throws {
        try await TestServer.run(.live) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let request: [String: any Sendable] = [
                "challengeId": try #require(challenge["challengeId"]), "keyId": key.keyID, "counter": 1,
                "signature": try key.sign(.login, challenge: try #require(challenge["challenge"]), counter: 1),
            ]
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await api.call(.post, "/v1/sessions/biometric", json: request).code ?? "created" }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == "created" }.count == 1)
            #expect(statuses.filter { $0 == "challenge_used" }.count == 19)
        }
    }
}
