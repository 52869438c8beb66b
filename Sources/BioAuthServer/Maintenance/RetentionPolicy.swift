import Foundation

/// How long rows that are no longer needed are kept, and how often the server purges them.
///
/// Nothing still live is ever purged: a challenge goes once it has expired, a token once it expired (or its session
/// ended) ``tokens`` ago, so a client presenting it meanwhile still gets `token_expired` or `session_ended`, and rotated
/// refresh tokens of a live session stay until then, so reusing one still ends the session; a session goes once it
/// ended (or was abandoned) ``tokens`` ago and nothing refers to it. Accounts, devices and payments are never purged.
public struct RetentionPolicy: Sendable, Equatable {
    /// Seconds between purges (3600); `0` turns the background job off (`bioauth admin purge` still works).
    public var interval: TimeInterval = 3600
    /// How long tokens are kept after they expired or their session ended (30 days).
    public var tokens: TimeInterval = 30 * 86_400
    /// How long an `Idempotency-Key` is remembered (24 hours): a retry within it gets the first response back.
    public var idempotencyKeys: TimeInterval = 86_400
    /// How long audit events are kept (7 years, 2557 days; set it to the bank's own policy).
    public var auditEvents: TimeInterval = 2557 * 86_400
    /// How long a webhook event is kept once all its deliveries ended (30 days): the deliveries list shows it meanwhile.
    public var webhookEvents: TimeInterval = 30 * 86_400
    /// How long a purge rests after each full batch, as a multiple of the time the batch took (2: the purge has the
    /// database at most a third of the time). A large backlog then costs the requests served meanwhile less latency, and
    /// takes longer to clear; `0` purges without resting (within ``batchRests``). On a database whose expired rows lie scattered among those
    /// kept, a rest of 2 kept sign-ins' p99 during a day's purge lower than a rest of 1 in nine of eleven pairs of
    /// runs side by side (docs/PERFORMANCE.md, "Retention at scale").
    public var batchRest: Double = 2
    /// How many rows a purge deletes per unit of work, within ``batchSizes``; `nil` (the default) leaves it to the engine:
    /// ``defaultBatchSize(for:)``, 50 on PostgreSQL and 10 on SQLite. Each batch holds its rows' locks (on SQLite, the one
    /// database thread), and its commit flushes its share of the write-ahead log, while the requests served meanwhile
    /// wait behind it, so what it adds to their p99 follows a batch's time, and a rest between batches does not shorten
    /// that wait (docs/PERFORMANCE.md, "Retention at scale"). Larger batches clear a backlog faster where the expired rows
    /// lie together.
    public var batchSize: Int? = nil

    /// The batch size a purge uses on `engine` unless ``batchSize`` is set: 50 rows on PostgreSQL, 10 on SQLite.
    ///
    /// On a database whose expired rows lie scattered among those kept, PostgreSQL's batches of 50 (3–5 ms each) kept
    /// sign-ins' p99 during a day's purge at 1.3–1.6 times the quiet figure where batches of 100 (6–10 ms) reached 1.6–2.0
    /// and batches of 250 (17 ms) 2.0–2.6 (in thirty-one more runs at 50, a median of 1.4, four past 2); batches of 25 were
    /// lower still but cleared a third as many rows under load, and one run of seventeen stalled. SQLite runs every unit of
    /// work on one thread, where each request arriving during a batch waits for all of it: batches of 50 raised p99 2.5
    /// times at the median of sixteen runs (a rest of 10 instead of 2: 1.9–2.2), batches of 25 1.9–2.0 times, batches of
    /// 10 1.3–1.9 times in all ten runs at 1 000 sign-ins/s, clearing half as many rows under load (idle, as fast as 50).
    public static func defaultBatchSize(for engine: DatabaseDialect) -> Int {
        switch engine {
        case .postgres: 50
        case .sqlite: 10
        }
    }

    /// The batch size a purge uses on `engine`: ``batchSize`` if set, else ``defaultBatchSize(for:)``.
    public func batchSize(on engine: DatabaseDialect) -> Int { batchSize ?? Self.defaultBatchSize(for: engine) }

    /// The batch sizes ``batchSize`` may take, on either engine (on PostgreSQL, below 50 measured lower p99 but a slower
    /// purge, and one unexplained stall: ``defaultBatchSize(for:)``).
    public static let batchSizes = 10...10_000
    /// The rests ``batchRest`` may take, as multiples of each batch's time.
    public static let batchRests: ClosedRange<Double> = 0...10
    /// ``batchSizes`` as help and error messages write it: `10-10000`.
    public static var batchSizesText: String { "\(batchSizes.lowerBound)-\(batchSizes.upperBound)" }
    /// ``defaultBatchSize(for:)`` as help texts write it: `50 on PostgreSQL, 10 on SQLite`.
    public static var defaultBatchSizesText: String {
        "\(defaultBatchSize(for: .postgres)) on PostgreSQL, \(defaultBatchSize(for: .sqlite)) on SQLite"
    }
    /// ``batchRests`` as help and error messages write it: `0-10`.
    public static var batchRestsText: String { "\(Int(batchRests.lowerBound))-\(Int(batchRests.upperBound))" }

    /// The defaults: hourly, tokens 30 days, idempotency keys 24 hours, audit events 7 years, webhook events 30 days,
    /// the engine's batch size (``defaultBatchSize(for:)``), a rest twice as long as each batch.
    public init() {}

    /// Checks the values; the message names the setting.
    func validate() throws {
        guard interval >= 0, interval.isFinite else { throw ConfigurationError(message: "retention interval must be 0 (off) or positive") }
        guard tokens >= 0, tokens.isFinite else { throw ConfigurationError(message: "token retention must not be negative") }
        guard idempotencyKeys >= 3600, idempotencyKeys.isFinite else {
            throw ConfigurationError(message: "idempotency key retention must be at least 1 hour")
        }
        guard auditEvents >= 86_400, auditEvents.isFinite else { throw ConfigurationError(message: "audit retention must be at least 1 day") }
        guard webhookEvents >= 86_400, webhookEvents.isFinite else { throw ConfigurationError(message: "webhook retention must be at least 1 day") }
        guard Self.batchRests.contains(batchRest) else {
            throw ConfigurationError(message: "retention batch rest must be \(Self.batchRestsText) (times each batch's duration)")
        }
        if let batchSize, !Self.batchSizes.contains(batchSize) {
            throw ConfigurationError(message: "retention batch size must be \(Self.batchSizesText) rows")
        }
    }
}
