import HummingbirdBcrypt
import NIOPosix

import struct Foundation.UUID

/// bcrypt on its own threads, so hashing at production cost neither blocks an event loop nor starves the
/// database's threads.
final class PasswordHasher: Sendable {
    private let pool: NIOThreadPool
    private let cost: UInt8
    /// A hash of a random password, verified against when the username is unknown, so that an unknown
    /// username takes as long as a wrong password.
    private let decoyHash: String
    /// Where the queue's depth and each job's wait for a thread are recorded.
    private let metrics: ServerMetrics

    /// Starts `threads` threads and computes the decoy hash.
    static func start(cost: Int, threads: Int, metrics: ServerMetrics) async throws -> PasswordHasher {
        // Checked here too, before any thread starts: this is where a cost is used, whoever passes it.
        guard ServerConfiguration.bcryptCostRange.contains(cost), threads >= 1 else {
            let costs = ServerConfiguration.bcryptCostRange
            throw ConfigurationError(message: "bcrypt cost must be \(costs.lowerBound)-\(costs.upperBound) and hashing threads at least 1")
        }
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        let cost = UInt8(cost)
        let decoy = try await pool.runIfActive { Bcrypt.hash(UUID().uuidString, cost: cost) }
        return PasswordHasher(pool: pool, cost: cost, decoyHash: decoy, metrics: metrics)
    }

    private init(pool: NIOThreadPool, cost: UInt8, decoyHash: String, metrics: ServerMetrics) {
        self.pool = pool
        self.cost = cost
        self.decoyHash = decoyHash
        self.metrics = metrics
    }

    /// The bcrypt hash of `password`.
    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await run { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with `hash` nil, spends the same time and answers false.
    func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? decoyHash
        let matches = try await run { Bcrypt.verify(password, hash: target) }
        return hash != nil && matches
    }

    /// Runs `work` on a hashing thread, recording how long it waited in the queue. The pool throws only for a job it
    /// never ran (it is shutting down, or the request was cancelled while queued); that job leaves the queue too.
    private func run<R: Sendable>(_ work: @escaping @Sendable () -> R) async throws -> R {
        let metrics = self.metrics
        let queued = ContinuousClock.now
        metrics.passwordHashQueued()
        do {
            return try await pool.runIfActive {
                metrics.passwordHashStarted(waited: ContinuousClock.now - queued)
                return work()
            }
        } catch {
            metrics.passwordHashStarted(waited: ContinuousClock.now - queued)
            throw error
        }
    }

    /// Stops the threads.
    func shutdown() async throws { try await pool.shutdownGracefully() }
}
