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

    /// The hits counted on `bucket` in its window as it stands at `now` (0 when the window has passed or the bucket has
    /// none), without counting one.
    func hits(_ bucket: String, now: Int64, window: Int64) async throws -> (windowStart: Int64, hits: Int64)? {
        guard let row = try await db.select().columns("window_start", "hits").from("rate_limits").where("bucket", .equal, bucket).first()
        else { return nil }
        let start = try row.decode(column: "window_start", as: Int64.self)
        guard now >= start, now - start < window else { return nil }
        return (start, try row.decode(column: "hits", as: Int64.self))
    }

    /// Binds: bucket, now, window length, window length.
    static let countHit = FixedSQL(
        """
        INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1)
        ON CONFLICT (bucket) DO UPDATE SET
            window_start = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN excluded.window_start ELSE rate_limits.window_start END,
            hits = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN 1 ELSE rate_limits.hits + 1 END
        RETURNING window_start, hits
        """
    )
}
