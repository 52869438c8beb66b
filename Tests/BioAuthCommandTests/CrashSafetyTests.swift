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
    /// The outcome of one authorization attempt as the client saw it.
    enum Seen: Sendable { case acknowledged, refused(String), noAnswer }

    /// Acknowledgements so far in a round, so the kill lands while work is still under way.
    actor Progress {
        private(set) var acknowledged = 0
        func count() { acknowledged += 1 }
    }

    @Test("payments under load, the server killed with SIGKILL at random points: every acknowledged authorization is kept exactly once",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat")))
    func killDuringAuthorizations() async throws {
        try await ServerProcessFixture.run("crash") { executable, folder, http in
            try await Self.run(executable: executable, folder: folder, http: http)
        }
    }

    static func run(executable: URL, folder: URL, http: HTTPClient) async throws {
        let settings = ServerProcessFixture.settings(
            in: folder, database: folder.appendingPathComponent("bioauth.sqlite").path, ["BIOAUTH_BCRYPT_COST": "4"])
        var server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
        var api = BioAuthAPI(serverURL: server.url)
        _ = try await api.createAccount(username: "alice", password: "correct horse")
        var tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "phone-1")
        try await api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: tokens.accessToken)

        var acknowledged: Set<String> = []
        var created: [String] = []
        for round in 0..<3 {
            var payments: [String] = []
            for index in 0..<24 {
                let payment = try await api.createPayment(
                    amount: Money(minorUnits: Int64(100 + index), currency: .cny), payeeID: "shop-\(index)", payeeName: "Shop",
                    idempotencyKey: "r\(round)-\(index)", accessToken: tokens.accessToken)
                payments.append(payment.id)
            }
            created += payments
            let token = tokens.accessToken
            let client = api
            let pid = server.pid
            let batch = payments
            let progress = Progress()
            let killAfter = Int.random(in: 1...20)
            // Four workers authorize; the server is killed somewhere in the middle of their work.
            let seen = try await withThrowingTaskGroup(of: [(String, Seen)].self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var outcomes: [(String, Seen)] = []
                        for id in batch[(worker * 6)..<(worker * 6 + 6)] {
                            do {
                                let paid = try await client.authorizeWithPIN(id, pin: "258046", accessToken: token)
                                outcomes.append((id, paid.status == "authorized" ? .acknowledged : .refused(paid.status)))
                                await progress.count()
                            } catch {
                                outcomes.append((id, APIProblem.code(of: error).map { code in
                                    code == "server_unreachable" || code == "unexpected_response" ? Seen.noAnswer : .refused(code)
                                } ?? .noAnswer))
                            }
                        }
                        return outcomes
                    }
                }
                group.addTask {
                    while await progress.acknowledged < killAfter { try await Task.sleep(for: .milliseconds(1)) }
                    kill(pid, SIGKILL)
                    return []
                }
                return try await group.reduce(into: [(String, Seen)]()) { $0 += $1 }
            }
            var unanswered = 0
            for (id, outcome) in seen {
                if case .acknowledged = outcome { acknowledged.insert(id) }
                if case .noAnswer = outcome { unanswered += 1 }
                if case .refused(let code) = outcome { Issue.record("payment \(id) refused with \(code) before the crash") }
            }
            #expect(unanswered > 0, "round \(round): the kill came after all the work; nothing was tested")
            await server.stop()
            server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            api = BioAuthAPI(serverURL: server.url)
            tokens = try await api.refresh(tokens.refreshToken)
        }

        // After the last restart: every acknowledged payment is authorized with a valid receipt; every other one is
        // either still pending or authorized (committed, but the answer was lost to the crash) — never in between.
        let receiptKeys = try await api.receiptKeys()
        var authorized = 0
        for id in created {
            let payment = try await api.payment(id, accessToken: tokens.accessToken)
            if acknowledged.contains(id) { #expect(payment.status == "authorized", "acknowledged \(id) is \(payment.status)") }
            switch payment.status {
            case "authorized":
                authorized += 1
                let receipt = try #require(payment.receipt, "authorized without a receipt: half done")
                #expect(receiptKeys.contains { receipt.isValid(signedBy: $0) })
            case "pending": break
            default: Issue.record("payment \(id) is \(payment.status) after the crash")
            }
        }
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
