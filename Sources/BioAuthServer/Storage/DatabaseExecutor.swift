import SQLKit

/// Runs units of work against the SQL database through SQLKit, in SQL every supported dialect accepts.
///
/// Implementations guarantee that a transaction's statements are not interleaved with another unit of
/// work's, and that a unit of work that throws leaves nothing behind.
public protocol DatabaseExecutor: Sendable {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Closes the database. Nothing may use it afterwards.
    func close() async throws
}
