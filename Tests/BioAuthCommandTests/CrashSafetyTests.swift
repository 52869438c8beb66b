import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import Foundation
import Testing

@testable import bioauth

#if canImport(Glibc)
import Glibc
#endif

/// `kill -9` during payment authorizations, then a restart on the same database: whatever the server acknowledged
/// is there exactly once, and nothing is half done.
@Suite("Crash safety")
struct CrashSafetyTests {
    @Test(
        "payments under load, the server killed with SIGKILL at random points: every acknowledged authorization is kept exactly once",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func killDuringAuthorizations() async throws {
        try await ServerProcessFixture.run("crash") { executable, folder, http in
            try await Self.run(executable: executable, folder: folder, http: http)
        }
    }

    static func run(executable: URL, folder: URL, http: HTTPClient) async throws {
        let settings = ServerProcessFixture.settings(
            in: folder,
            database: folder.appendingPathComponent("bioauth.sqlite").path,
            ["BIOAUTH_BCRYPT_COST": "4"]
        )
        try await ServerProcessFixture.registerPayees([AuthorizationLoad.payee], in: folder.appendingPathComponent("bioauth.sqlite"))
        var server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
        var api = BioAuthAPI(serverURL: server.url)
        _ = try await api.createAccount(username: "alice", password: "correct horse")
        var tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "phone-1")
        try await api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: tokens.accessToken)

        var acknowledged: Set<String> = []
        var created: [String] = []
        for round in 0..<3 {
            let payments = try await AuthorizationLoad.createPayments(24, prefix: "r\(round)", api: api, token: tokens.accessToken)
            created += payments
            let pid = server.pid
            // Four workers authorize; the server is killed somewhere in the middle of their work.
            let outcome = await AuthorizationLoad.authorize(
                payments,
                workers: 4,
                api: api,
                token: tokens.accessToken,
                interruptAfter: Int.random(in: 1...20)
            ) { kill(pid, SIGKILL) }
            acknowledged.formUnion(outcome.acknowledged)
            #expect(outcome.unanswered > 0, "round \(round): the kill came after all the work; nothing was tested")
            await server.stop()
            server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            api = BioAuthAPI(serverURL: server.url)
            tokens = try await api.refresh(tokens.refreshToken)
        }

        // After the last restart: acknowledged means authorized once, with a valid receipt; nothing is half done.
        let authorized = try await AuthorizationLoad.verify(created, acknowledged: acknowledged, api: api, token: tokens.accessToken)
        #expect(authorized >= acknowledged.count)
        // Exactly once: authorizing again is refused as already done, never a second authorization.
        for id in acknowledged.prefix(5) {
            await #expect { _ = try await api.authorizeWithPIN(id, pin: "258046", accessToken: tokens.accessToken) } throws: {
                APIProblem.code(of: $0) == "payment_already_authorized"
            }
        }
        #expect(!acknowledged.isEmpty, "no authorization was acknowledged before the kills; the test proved nothing")
        await server.stop()
    }
}
