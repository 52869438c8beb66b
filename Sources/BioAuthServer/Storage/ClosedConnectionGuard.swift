import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// Ends the units of work a closed PostgreSQL connection left waiting.
///
/// When the server closes a connection under a query (a terminated backend, a failover, a restart), PostgresNIO (1.33)
/// normally fails the query at once; but now and then it leaves it waiting for an answer that can no longer come. The
/// unit of work would then never end, and neither would the request, the webhook dispatcher's pass or the graceful
/// shutdown that waits for it (a test that terminates the database's connections hung this way in about one run of the
/// whole suite in three). So each unit of work runs in a task of its own while its caller waits for whichever comes
/// first: the unit's own outcome, or ``grace`` after its connection closed, when the caller gets
/// ``APIError/databaseConnectionLost`` (503 `not_ready`, retry after a second) and the unit is cancelled and left to
/// PostgresNIO. As after any lost connection, a unit whose `COMMIT` was on its way may have taken effect; every
/// guarantee that matters is written so that a retry is safe (a challenge used once, a payment authorized once).
///
/// Each connection's close is watched once (not once per unit, which would pile callbacks up on a long-lived
/// connection); the units in flight on it are kept by connection.
final class ClosedConnectionGuard: Sendable {
    /// How long a unit of work may go on after its connection closed: PostgresNIO's own error, when it comes, comes at
    /// once, and says more.
    static let grace: TimeAmount = .seconds(1)

    private struct Watched {
        var units: [Int: @Sendable () -> Void] = [:]
    }

    private let state = NIOLockedValueBox<(next: Int, connections: [ObjectIdentifier: Watched])>((0, [:]))

    /// Runs `work` (a unit of work on `connection`) and returns its outcome, unless `connection` closes and `work` has
    /// not finished ``grace`` later: then throws ``APIError/databaseConnectionLost`` at once. Cancelling the caller
    /// cancels `work`.
    func run<R: Sendable>(on connection: PostgresConnection, _ work: @escaping @Sendable () async throws -> R) async throws -> R {
        let task = NIOLockedValueBox<Task<Void, Never>?>(nil)
        return try await withTaskCancellationHandler {
            try await firstOutcome { resolve in
                let key = watch(connection) {
                    resolve(.failure(APIError.databaseConnectionLost))
                    task.withLockedValue { $0 }?.cancel()
                }
                let started = Task {
                    let result: Result<R, any Error>
                    do { result = .success(try await work()) } catch { result = .failure(error) }
                    self.unwatch(connection, key)
                    resolve(result)
                }
                task.withLockedValue { $0 = started }
            }
        } onCancel: {
            task.withLockedValue { $0 }?.cancel()
        }
    }

    /// Registers `abandon` to run ``grace`` after `connection` closes (at once plus ``grace`` if it has already); returns
    /// the key to take it back with.
    private func watch(_ connection: PostgresConnection, _ abandon: @escaping @Sendable () -> Void) -> Int {
        let id = ObjectIdentifier(connection)
        let (key, first) = state.withLockedValue { state -> (Int, Bool) in
            state.next += 1
            let first = state.connections[id] == nil
            state.connections[id, default: Watched()].units[state.next] = abandon
            return (state.next, first)
        }
        if first {
            connection.closeFuture.whenComplete { _ in
                connection.eventLoop.scheduleTask(in: Self.grace) { self.abandonAll(on: connection) }
            }
        }
        return key
    }

    private func unwatch(_ connection: PostgresConnection, _ key: Int) {
        state.withLockedValue { _ = $0.connections[ObjectIdentifier(connection)]?.units.removeValue(forKey: key) }
    }

    /// Abandons every unit still in flight on a connection that closed, and forgets the connection. Taking the
    /// connection itself (not its identifier) keeps it alive until then, so no new connection can be given its address,
    /// and so its entry, in the meantime.
    private func abandonAll(on connection: PostgresConnection) {
        let units = state.withLockedValue { $0.connections.removeValue(forKey: ObjectIdentifier(connection))?.units.values.map { $0 } ?? [] }
        for abandon in units { abandon() }
    }
}
