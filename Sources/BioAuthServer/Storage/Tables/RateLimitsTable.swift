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

    /// Counts one hit on `shared`, a bucket that many concurrent requests share (one client address's), and, when it had
    /// room, one on `bucket` as ``hit(_:now:window:)`` does (nil: none). Nothing is counted once `shared` is full.
    ///
    /// `shared` is counted in ``shardCount(limit:engine:)`` rows, its shards (``shardNames(_:count:)``), each allowed its
    /// share of `limit` (``shardQuota(_:of:count:)``) in a window of its own, so concurrent requests update different
    /// rows instead of queueing on one. A hit goes to a shard picked at random; when that one is full, the shards are read
    /// and one with room is tried, until one counts it or none has room. Each try is a conditional upsert, so no shard
    /// ever passes its share: at most `limit` hits are counted in the live windows, exactly as with one row, whatever the
    /// concurrency, and a hit is refused only when every shard was full.
    func hit(shared: String, limit: Int, then bucket: String?, now: Int64, window: Int64, engine: DatabaseDialect) async throws -> SharedHit {
        let count = Self.shardCount(limit: limit, engine: engine)
        let names = Self.shardNames(shared, count: count)
        var tried: Set<Int> = []
        var next = Int.random(in: 0..<count)
        while true {
            tried.insert(next)
            let quota = Self.shardQuota(next, of: limit, count: count)
            if let counted = try await hit(names[next], within: quota, then: bucket, now: now, window: window, engine: engine) {
                return .counted(bucket: counted.bucket)
            }
            // That shard is full: find one with room that has not been tried.
            var room: [Int] = []
            var until = Int64.max
            let live = try await windows(names, now: now, window: window)
            for (index, name) in names.enumerated() {
                if let (start, hits) = live[name], hits >= Self.shardQuota(index, of: limit, count: count) {
                    until = min(until, start + window)
                } else if !tried.contains(index) {
                    room.append(index)
                }
            }
            guard let pick = room.randomElement() else { return .full(until: until == .max ? now + window : until) }
            next = pick
        }
    }

    /// How many rows a shared bucket is counted in: on PostgreSQL, where the requests behind one address run at once, 16
    /// (no more than `limit`, so each has a share of at least one); on SQLite, which runs one unit of work at a time, 1.
    /// Each row is locked from its hit until that hit's commit has been flushed; with 64 sign-ins at once from one address,
    /// the hit's statement took 0.63 ms on one row, 0.25 ms on 8 and 0.09 ms on 16 (docs/PERFORMANCE.md).
    static func shardCount(limit: Int, engine: DatabaseDialect) -> Int {
        engine == .postgres ? max(1, min(16, limit)) : 1
    }

    /// The rows of a shared bucket counted in `count` shards: the bucket's own name, then `name#1`, `name#2`, ….
    static func shardNames(_ bucket: String, count: Int) -> [String] {
        [bucket] + (1..<max(1, count)).map { bucket + "#\($0)" }
    }

    /// Shard `index`'s share of `limit`: the shares of `count` shards add up to `limit`.
    static func shardQuota(_ index: Int, of limit: Int, count: Int) -> Int64 {
        Int64(limit / count + (index < limit % count ? 1 : 0))
    }

    /// Counts one hit on `name` unless its live window already holds `quota`, and then one on `bucket` (nil: none). Nil
    /// when `name` was full and nothing was counted. On PostgreSQL one statement; on SQLite the same two one after the other.
    private func hit(
        _ name: String,
        within quota: Int64,
        then bucket: String?,
        now: Int64,
        window: Int64,
        engine: DatabaseDialect
    ) async throws -> Counted? {
        guard let bucket, engine == .postgres else {
            guard try await db.first(Self.countHitWithin(name, now, window, window, window, quota)) != nil else { return nil }
            guard let bucket else { return Counted(bucket: nil) }
            return Counted(bucket: try await hit(bucket, now: now, window: window))
        }
        guard let row = try await db.first(Self.countTwoHits(name, now, window, window, window, quota, bucket, now, window, window)) else {
            return nil
        }
        guard let start = try row.decode(column: "bucket_start", as: Int64?.self), let hits = try row.decode(column: "bucket_hits", as: Int64?.self)
        else { throw UnreadableRow(table: "rate_limits", column: "hits") }
        return Counted(bucket: (start, hits))
    }

    /// A hit a shard had room for, with the second bucket's window start and hits when there was one.
    private struct Counted {
        var bucket: (windowStart: Int64, hits: Int64)?
    }

    /// The live windows among `buckets` at `now`: each one's start and hits.
    private func windows(_ buckets: [String], now: Int64, window: Int64) async throws -> [String: (Int64, Int64)] {
        let rows = try await db.select().columns("bucket", "window_start", "hits").from("rate_limits").where("bucket", .in, buckets).all()
        var live: [String: (Int64, Int64)] = [:]
        for row in rows {
            let start = try row.decode(column: "window_start", as: Int64.self)
            guard now >= start, now - start < window else { continue }
            live[try row.decode(column: "bucket", as: String.self)] = (start, try row.decode(column: "hits", as: Int64.self))
        }
        return live
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
    private static let countOnConflictSet = """
        ON CONFLICT (bucket) DO UPDATE SET
            window_start = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN excluded.window_start ELSE rate_limits.window_start END,
            hits = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN 1 ELSE rate_limits.hits + 1 END
        """

    /// ``countOnConflictSet`` answering with the bucket's window and hits after the hit.
    private static let countOnConflict = countOnConflictSet + "\nRETURNING window_start, hits"

    /// Binds: bucket, now, window length, window length.
    static let countHit = FixedSQL("INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1) \(countOnConflict)")

    /// ``countHit`` unless the bucket's live window already holds a quota: no row back then, and nothing written.
    /// Binds: bucket, now, window length, window length, window length, quota.
    static let countHitWithin = FixedSQL(
        """
        INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1) \(countOnConflictSet)
        WHERE excluded.window_start - rate_limits.window_start >= ? OR excluded.window_start < rate_limits.window_start
            OR rate_limits.hits < ?
        RETURNING window_start, hits
        """
    )

    /// ``countHitWithin`` on a shard, then, when it counted, ``countHit`` on a second bucket, in one statement
    /// (PostgreSQL's data-modifying `WITH`); no row back when the shard was full. Binds: those of ``countHitWithin``,
    /// then the second bucket, now, window length, window length.
    static let countTwoHits = FixedSQL(
        """
        WITH shared AS (\(countHitWithin.text)),
        second AS (
            INSERT INTO rate_limits (bucket, window_start, hits)
            SELECT CAST(? AS TEXT), CAST(? AS BIGINT), 1 FROM shared \(countOnConflict)
        )
        SELECT second.window_start AS bucket_start, second.hits AS bucket_hits FROM shared LEFT JOIN second ON TRUE
        """
    )
}

/// What ``RateLimitsTable/hit(shared:limit:then:now:window:engine:)`` counted.
enum SharedHit: Sendable {
    /// The shared bucket had room and counted the hit; with the second bucket's window start and hits, when there was one.
    case counted(bucket: (windowStart: Int64, hits: Int64)?)
    /// Every shard of the shared bucket was full, and nothing was counted; `until` is the earliest end of a full shard's
    /// window, when there is room again.
    case full(until: Int64)
}

// MARK: Retention

extension RateLimitsTable {
    /// Buckets whose window started before `cutoff`: such a bucket counts from zero at its next hit anyway.
    static func purge(windowsBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "rate_limits", key: "bucket", condition: "window_start < \(bind: cutoff)")
    }
}
