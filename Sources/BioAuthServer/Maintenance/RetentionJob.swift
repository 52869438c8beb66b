import Foundation
import Logging
import ServiceLifecycle

/// The background job that runs ``Retention/purge(while:)`` every ``RetentionPolicy/interval`` (with up to a tenth more
/// at random, so instances started together do not all wake at once), in the application's service group: a graceful
/// shutdown stops it between two batches, before the database closes. Each run writes one log line with what it deleted.
struct RetentionJob: Service {
    let retention: Retention
    let interval: TimeInterval
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            let delay = interval * Double.random(in: 1.0...1.1)
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(Int64(delay * 1000))) }
            } catch {
                return
            }
            let started = ContinuousClock.now
            do {
                if let report = try await retention.purge(while: { !Task.isShuttingDownGracefully }) {
                    let elapsed = ContinuousClock.now - started
                    logger.info(
                        "retention purged \(report.total) rows",
                        metadata: ["deleted": "\(report)", "duration_ms": .stringConvertible(Double(elapsed.nanoseconds) / 1e6)]
                    )
                } else {
                    logger.debug("retention skipped: another instance holds the lease")
                }
            } catch {
                logger.error("retention failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}
