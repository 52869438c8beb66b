import BioAuthCore
import NIOConcurrencyHelpers

extension BioAuthService {
    /// How long `GET /readyz` waits for the database.
    static let readinessTimeout: Duration = .seconds(2)

    /// Whether the server can serve: it is not shutting down, and its database answers a query within `timeout`.
    /// (Migrations and the receipt key are done before the server listens at all.) Throws `not_ready` when not; the
    /// query is left to finish or fail on its own, so a hung database cannot hold the probe.
    func checkReadiness(timeout: Duration = readinessTimeout) async throws {
        guard !shutdown.isDraining else { throw APIError(.notReady, "The server is shutting down.") }
        let database = self.database
        let answered: Bool = try await firstOutcome { resolve in
            let timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                resolve(.success(false))
            }
            Task {
                let answered = try? await database.transaction { db in try await db.answers() }
                resolve(.success(answered == true))
                timer.cancel()
            }
        }
        guard answered else { throw APIError(.notReady, "The database does not answer.") }
    }
}

/// Whether a graceful shutdown has begun. Set once, by ``ShutdownDrain``; read by every readiness probe.
final class ShutdownState: Sendable {
    private let draining = NIOLockedValueBox(false)

    /// `true` from the moment a graceful shutdown begins.
    var isDraining: Bool { draining.withLockedValue { $0 } }

    func beginDraining() { draining.withLockedValue { $0 = true } }
}
