import SQLKit

/// A ``DatabaseExecutor`` that times each unit of work (retries and the wait for a connection or a group commit
/// included) and counts the retries of the one it wraps, in ``ServerMetrics``.
struct MeasuredDatabaseExecutor: DatabaseExecutor {
    let base: any DatabaseExecutor
    let metrics: ServerMetrics

    var dialect: DatabaseDialect { base.dialect }

    /// The base's background executor, measured the same way.
    var background: any DatabaseExecutor { MeasuredDatabaseExecutor(base: base.background, metrics: metrics) }

    func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await transaction(isolation: .serializable, body)
    }

    func transaction<R: Sendable>(isolation: TransactionIsolation, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    {
        let metrics = self.metrics
        let engine = base.dialect
        let start = ContinuousClock.now
        do {
            let retried: @Sendable () -> Void = { metrics.unitOfWorkRetried(engine: engine) }
            let result = try await UnitOfWorkEvents.$retried.withValue(retried) {
                try await base.transaction(isolation: isolation, body)
            }
            metrics.unitOfWork(engine: engine, outcome: "committed", duration: ContinuousClock.now - start)
            return result
        } catch {
            metrics.unitOfWork(engine: engine, outcome: "failed", duration: ContinuousClock.now - start)
            throw error
        }
    }

    func standalone<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.standalone(body)
    }

    func close() async throws { try await base.close() }
}

/// What an executor reports about the unit of work it runs for the current task.
enum UnitOfWorkEvents {
    /// Called each time the unit of work is rolled back by a serialization failure or deadlock and runs again.
    @TaskLocal static var retried: (@Sendable () -> Void)?
}
