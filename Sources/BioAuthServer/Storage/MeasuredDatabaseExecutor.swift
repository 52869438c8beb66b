import SQLKit

/// A ``DatabaseExecutor`` that times each unit of work (retries and the wait for a connection or a group commit
/// included) and counts the retries of the one it wraps and the statements it sends, in ``ServerMetrics``.
struct MeasuredDatabaseExecutor: DatabaseExecutor {
    let base: any DatabaseExecutor
    let metrics: ServerMetrics
    /// Where the base reports the units of work run through this executor.
    private let events: UnitOfWorkEvents

    init(base: any DatabaseExecutor, metrics: ServerMetrics) {
        self.base = base
        self.metrics = metrics
        let engine = base.dialect
        events = UnitOfWorkEvents(
            retried: { metrics.unitOfWorkRetried(engine: engine) },
            statementSent: { metrics.statementSent(engine: engine) }
        )
    }

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
            let result = try await UnitOfWorkEvents.$current.withValue(events) {
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
        try await UnitOfWorkEvents.$current.withValue(events) { try await base.standalone(body) }
    }

    func close() async throws { try await base.close() }
}

/// What an executor reports about the unit of work it runs for the current task, to ``current``.
struct UnitOfWorkEvents: Sendable {
    /// Called each time the unit of work is rolled back by a serialization failure or deadlock and runs again.
    var retried: @Sendable () -> Void
    /// Called for each statement sent to the database (PostgreSQL's executor: `BEGIN` and `COMMIT` included, each one
    /// round trip).
    var statementSent: @Sendable () -> Void

    /// Where the current task's unit of work reports; `nil` outside a ``MeasuredDatabaseExecutor``.
    @TaskLocal static var current: UnitOfWorkEvents?
}
