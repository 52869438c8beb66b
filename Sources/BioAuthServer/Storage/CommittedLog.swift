import NIOConcurrencyHelpers
import SQLKit

/// Log lines that say something was stored (the `audit` line of each audit event), written once the unit of work that
/// stored it commits, and only then.
///
/// A unit of work may run more than once (a serialization failure, a conditional insert that lost a race) or be rolled
/// back whole (``CheckBeforeWriting``); a line written as its event was inserted would then tell a log reader about
/// events the audit table never held, or tell them twice. The executors run each unit through
/// ``afterCommit(of:_:)``: every attempt starts with no lines, and the lines of the attempt that committed are written
/// when the unit returns. Outside such a unit (and in one whose every statement commits on its own,
/// ``TransactionIsolation/eachStatement`` on PostgreSQL), a line is written at once.
final class CommittedLog: Sendable {
    /// The lines of the unit of work running on this task.
    @TaskLocal static var current: CommittedLog?

    private let lines = NIOLockedValueBox<[@Sendable () -> Void]>([])

    /// Writes `line` once the current unit of work commits; at once when there is none.
    static func write(_ line: @escaping @Sendable () -> Void) {
        if let current {
            current.lines.withLockedValue { $0.append(line) }
        } else {
            line()
        }
    }

    /// Runs `unit`, an executor's unit of work, handing it `body` so wrapped that each run of it starts with no lines
    /// and collects those it writes; writes the lines of the run that committed once `unit` returns, and none when it
    /// throws.
    static func afterCommit<R: Sendable>(
        of body: @escaping @Sendable (any SQLDatabase) async throws -> R,
        _ unit: (@escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    ) async throws -> R {
        let log = CommittedLog()
        let result = try await unit { database in
            log.lines.withLockedValue { $0.removeAll() }
            return try await $current.withValue(log) { try await body(database) }
        }
        for line in log.lines.withLockedValue({ $0 }) { line() }
        return result
    }
}
