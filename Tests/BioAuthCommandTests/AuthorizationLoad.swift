import BioAuthClient
import BioAuthCore
import Foundation
import Testing

/// PIN authorizations of payments from concurrent workers while the server is interrupted (SIGKILL, SIGTERM), and what
/// a restart on the same database must find afterwards. Shared by the crash-safety and graceful-shutdown tests.
enum AuthorizationLoad {
    /// The outcome of one authorization as the client saw it.
    enum Seen: Sendable {
        case acknowledged
        case refused(String)
        case noAnswer
    }

    /// Counts acknowledgements and interrupts the server at the `interruptAfter`-th, from the worker that saw it. A
    /// separate task polling the count could be scheduled only after the workers had finished (it was, on a loaded
    /// two-core machine); interrupting here means each other worker has at most one request under way, so at least
    /// `payments - interruptAfter - (workers - 1)` are never answered.
    actor Progress {
        private var acknowledged = 0
        private let interruptAfter: Int
        private let interrupt: @Sendable () -> Void
        init(interruptAfter: Int, interrupt: @escaping @Sendable () -> Void) {
            self.interruptAfter = interruptAfter
            self.interrupt = interrupt
        }
        func count() {
            acknowledged += 1
            if acknowledged == interruptAfter { interrupt() }
        }
    }

    /// What the workers saw.
    struct Outcome {
        var acknowledged: Set<String> = []
        var unanswered = 0
    }

    /// The payee of the payments, which the server's database must have registered (``ServerProcessFixture/registerPayees(_:in:)``).
    static let payee = ("shop-1", "Shop")

    /// `count` pending payments (CNY 1.00, 1.01, …) to ``payee`` under idempotency keys `prefix-0`, `prefix-1`, ….
    static func createPayments(_ count: Int, prefix: String, api: BioAuthAPI, token: String) async throws -> [String] {
        var payments: [String] = []
        for index in 0..<count {
            payments.append(
                try await api.createPayment(
                    amount: Money(minorUnits: Int64(100 + index), currency: .cny),
                    payeeID: payee.0,
                    idempotencyKey: "\(prefix)-\(index)",
                    accessToken: token
                ).id
            )
        }
        return payments
    }

    /// Authorizes `payments` with the PIN 258046 from `workers` workers, each taking its share in order, and calls
    /// `interrupt` as the `interruptAfter`-th of them is acknowledged, which must leave at least one never started:
    /// `interruptAfter <= payments.count - workers`. A refusal is recorded as an issue: nothing the server answered may
    /// be refused while it is being interrupted.
    static func authorize(
        _ payments: [String],
        workers: Int,
        api: BioAuthAPI,
        token: String,
        interruptAfter: Int,
        interrupt: @escaping @Sendable () -> Void
    ) async -> Outcome {
        precondition(interruptAfter >= 1 && interruptAfter <= payments.count - workers, "the interruption must come while work is left")
        let progress = Progress(interruptAfter: interruptAfter, interrupt: interrupt)
        let share = payments.count / workers
        let seen = await withTaskGroup(of: [(String, Seen)].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var outcomes: [(String, Seen)] = []
                    for id in payments[(worker * share)..<(worker * share + share)] {
                        do {
                            let paid = try await api.authorizeWithPIN(id, pin: "258046", accessToken: token)
                            outcomes.append((id, paid.status == "authorized" ? .acknowledged : .refused(paid.status)))
                            await progress.count()
                        } catch {
                            let code = APIProblem.code(of: error)
                            let lost = code == nil || code == "server_unreachable" || code == "unexpected_response"
                            outcomes.append((id, lost ? .noAnswer : .refused(code ?? "")))
                        }
                    }
                    return outcomes
                }
            }
            return await group.reduce(into: [(String, Seen)]()) { $0 += $1 }
        }
        var outcome = Outcome()
        for (id, seen) in seen {
            switch seen {
            case .acknowledged: outcome.acknowledged.insert(id)
            case .refused(let code): Issue.record("payment \(id) refused with \(code) while the server was interrupted")
            case .noAnswer: outcome.unanswered += 1
            }
        }
        return outcome
    }

    /// After a restart: every acknowledged payment is authorized with a receipt that verifies; every other one is
    /// pending or authorized (committed, the answer lost), never anything between. Returns how many are authorized.
    static func verify(_ payments: [String], acknowledged: Set<String>, api: BioAuthAPI, token: String) async throws -> Int {
        let receiptKeys = try await api.receiptKeys()
        var authorized = 0
        for id in payments {
            let payment = try await api.payment(id, accessToken: token)
            if acknowledged.contains(id) { #expect(payment.status == "authorized", "acknowledged \(id) is \(payment.status)") }
            switch payment.status {
            case "authorized":
                authorized += 1
                let receipt = try #require(payment.receipt, "authorized without a receipt: half done")
                #expect(receiptKeys.contains { receipt.isValid(signedBy: $0) })
            case "pending": break
            default: Issue.record("payment \(id) is \(payment.status) after the restart")
            }
        }
        return authorized
    }
}
