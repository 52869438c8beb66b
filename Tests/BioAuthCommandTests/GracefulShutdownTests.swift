import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import Foundation
import Testing

@testable import bioauth

#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM during payment authorizations: the server stops accepting, answers what it took on, exits 0, and a restart
/// on the same database finds every acknowledged authorization done once and nothing half done.
@Suite("Graceful shutdown")
struct GracefulShutdownTests {
    enum Seen: Sendable { case acknowledged, refused(String), noAnswer }

    actor Progress {
        private(set) var acknowledged = 0
        func count() { acknowledged += 1 }
    }

    @Test("SIGTERM under load: exit status 0, every acknowledged authorization kept once, nothing half done",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat")))
    func sigtermDuringAuthorizations() async throws {
        try await ServerProcessFixture.run("sigterm") { executable, folder, http in
            let settings = ServerProcessFixture.settings(
                in: folder, database: folder.appendingPathComponent("bioauth.sqlite").path, ["BIOAUTH_BCRYPT_COST": "4"])
            let server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            let api = BioAuthAPI(serverURL: server.url)
            _ = try await api.createAccount(username: "alice", password: "correct horse")
            let tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "phone-1")
            try await api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: tokens.accessToken)
            var payments: [String] = []
            for index in 0..<32 {
                payments.append(try await api.createPayment(
                    amount: Money(minorUnits: Int64(100 + index), currency: .cny), payeeID: "shop-\(index)", payeeName: "Shop",
                    idempotencyKey: "p-\(index)", accessToken: tokens.accessToken).id)
            }
            let (token, pid, batch, progress) = (tokens.accessToken, server.pid, payments, Progress())
            let seen = try await withThrowingTaskGroup(of: [(String, Seen)].self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var outcomes: [(String, Seen)] = []
                        for id in batch[(worker * 8)..<(worker * 8 + 8)] {
                            do {
                                let paid = try await api.authorizeWithPIN(id, pin: "258046", accessToken: token)
                                outcomes.append((id, paid.status == "authorized" ? .acknowledged : .refused(paid.status)))
                                await progress.count()
                            } catch {
                                let code = APIProblem.code(of: error)
                                outcomes.append((id, code == nil || code == "server_unreachable" || code == "unexpected_response" ? .noAnswer : .refused(code!)))
                            }
                        }
                        return outcomes
                    }
                }
                group.addTask {
                    while await progress.acknowledged < 6 { try await Task.sleep(for: .milliseconds(1)) }
                    kill(pid, SIGTERM)
                    return []
                }
                return try await group.reduce(into: [(String, Seen)]()) { $0 += $1 }
            }
            let status = await server.exitStatus(within: 20)
            #expect(status == 0, "SIGTERM ends the server with status 0: \(String(describing: status)); log: \(server.log.suffix(2000))")
            #expect(!server.log.contains("error"), "a graceful shutdown logs no error: \(server.log.suffix(2000))")
            var acknowledged: Set<String> = []
            var unanswered = 0
            for (id, outcome) in seen {
                switch outcome {
                case .acknowledged: acknowledged.insert(id)
                case .refused(let code): Issue.record("payment \(id) refused with \(code) during the shutdown")
                case .noAnswer: unanswered += 1
                }
            }
            #expect(acknowledged.count >= 6)
            #expect(unanswered > 0, "the signal came after all the work; the shutdown was not tested under load")

            let restarted = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            let after = BioAuthAPI(serverURL: restarted.url)
            let fresh = try await after.refresh(tokens.refreshToken)
            let receiptKeys = try await after.receiptKeys()
            for id in payments {
                let payment = try await after.payment(id, accessToken: fresh.accessToken)
                if acknowledged.contains(id) { #expect(payment.status == "authorized", "acknowledged \(id) is \(payment.status)") }
                switch payment.status {
                case "authorized":
                    let receipt = try #require(payment.receipt, "authorized without a receipt: half done")
                    #expect(receiptKeys.contains { receipt.isValid(signedBy: $0) })
                case "pending": break
                default: Issue.record("payment \(id) is \(payment.status) after the shutdown")
                }
            }
            await restarted.stop()
        }
    }

    @Test("a request that never finishes does not hold the shutdown past --shutdown-timeout",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat")))
    func shutdownTimeout() async throws {
        try await ServerProcessFixture.run("shutdown-timeout") { executable, folder, http in
            let settings = ServerProcessFixture.settings(in: folder, ["BIOAUTH_BCRYPT_COST": "4", "BIOAUTH_SHUTDOWN_TIMEOUT": "1"])
            let server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            // A request whose body never comes: in flight until the shutdown gives up on it.
            let port = try #require(server.url.port)
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(connected == 0)
            let head = "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            _ = head.withCString { send(socket, $0, strlen($0), 0) }
            try await Task.sleep(for: .milliseconds(300))
            let start = ContinuousClock.now
            kill(server.pid, SIGTERM)
            let status = await server.exitStatus(within: 10)
            let waited = ContinuousClock.now - start
            #expect(status == 0, "\(server.log.suffix(1000))")
            #expect(waited >= .milliseconds(900) && waited < .seconds(5), "the shutdown waited \(waited) for the request in flight (limit 1 s)")
        }
    }
}
