import Foundation
import SQLKit

extension SQLDatabase {
    /// `rate_limits`: fixed-window hit counters, one row per bucket, shared by every instance.
    var rateLimits: RateLimitsTable { RateLimitsTable(db: self) }
}

/// The statements on `rate_limits`.
struct RateLimitsTable: Table {
    let db: any SQLDatabase

    /// Counts one hit on `bucket` at `now` in a window of `window` milliseconds, in one statement: starts the bucket,
    /// restarts its window when it has passed (or the clock went back), or counts one more hit in it. Hits past any limit
    /// are counted too. Returns the window's start and its hits, this one included.
    func hit(_ bucket: String, now: Int64, window: Int64) async throws -> (windowStart: Int64, hits: Int64) {
        // `excluded` is the row that was to be inserted: now.
        guard let row = try await db.first(Self.countHit(bucket, now, window, window)) else {
            throw UnreadableRow(table: "rate_limits", column: "hits")
        }
        return (try row.decode(column: "window_start", as: Int64.self), try row.decode(column: "hits", as: Int64.self))
    }

    /// Counts one hit on `shared` and, while `shared` is within `sharedLimit` hits, one on `bucket`, each as ``hit(_:now:window:)``
    /// does; returns each window's start and hits (nil for `bucket` when it was not counted). On PostgreSQL one statement;
    /// on SQLite, which runs one unit of work at a time, the same two one after the other.
    func hit(
        _ shared: String,
        whileAtMost sharedLimit: Int,
        then bucket: String,
        now: Int64,
        window: Int64,
        engine: DatabaseDialect
    ) async throws -> (shared: (windowStart: Int64, hits: Int64), bucket: (windowStart: Int64, hits: Int64)?) {
        guard engine == .postgres else {
            let first = try await hit(shared, now: now, window: window)
            guard first.hits <= Int64(sharedLimit) else { return (first, nil) }
            return (first, try await hit(bucket, now: now, window: window))
        }
        guard
            let row = try await db.first(
                Self.countTwoHits(shared, now, window, window, bucket, now, Int64(sharedLimit), window, window)
            )
        else { throw UnreadableRow(table: "rate_limits", column: "hits") }
        let counted = (try row.decode(column: "shared_start", as: Int64.self), try row.decode(column: "shared_hits", as: Int64.self))
        guard let start = try row.decode(column: "bucket_start", as: Int64?.self), let hits = try row.decode(column: "bucket_hits", as: Int64?.self)
        else { return (counted, nil) }
        return (counted, (start, hits))
    }

    /// The hits counted on `bucket` in its window as it stands at `now` (0 when the window has passed or the bucket has
    /// none), without counting one.
    func hits(_ bucket: String, now: Int64, window: Int64) async throws -> (windowStart: Int64, hits: Int64)? {
        guard let row = try await db.select().columns("window_start", "hits").from("rate_limits").where("bucket", .equal, bucket).first()
        else { return nil }
        let start = try row.decode(column: "window_start", as: Int64.self)
        guard now >= start, now - start < window else { return nil }
        return (start, try row.decode(column: "hits", as: Int64.self))
    }

    /// What a hit does to a bucket that has a row: restart its window when it has passed (or the clock went back), else count
    /// one more. `excluded` is the row that was to be inserted: now. Binds: window length, window length.
    private static let countOnConflict = """
        ON CONFLICT (bucket) DO UPDATE SET
            window_start = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN excluded.window_start ELSE rate_limits.window_start END,
            hits = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN 1 ELSE rate_limits.hits + 1 END
        RETURNING window_start, hits
        """

    /// Binds: bucket, now, window length, window length.
    static let countHit = FixedSQL("INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1) \(countOnConflict)")

    /// ``countHit`` on a shared bucket, then on a second bucket while the first is within a limit, in one statement
    /// (PostgreSQL's data-modifying `WITH`). Binds: the shared bucket, now, window length, window length; the second bucket,
    /// now, the shared bucket's limit, window length, window length.
    static let countTwoHits = FixedSQL(
        """
        WITH shared AS (INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1) \(countOnConflict)),
        second AS (
            INSERT INTO rate_limits (bucket, window_start, hits)
            SELECT CAST(? AS TEXT), CAST(? AS BIGINT), 1 FROM shared WHERE shared.hits <= CAST(? AS BIGINT) \(countOnConflict)
        )
        SELECT shared.window_start AS shared_start, shared.hits AS shared_hits, second.window_start AS bucket_start,
            second.hits AS bucket_hits
        FROM shared LEFT JOIN second ON TRUE
        """
    )
}
