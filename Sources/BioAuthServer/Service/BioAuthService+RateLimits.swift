import BioAuthCore
import Foundation
import SQLKit

extension BioAuthService {
    /// Counts one hit on `bucket` in a fixed window; refuses with `rate_limited` (429) past `limit` hits, counting the
    /// refusal under `name` (a fixed name for the kind of limit, for the metrics; never the bucket, which names clients).
    ///
    /// The counter lives in the database, so every server instance sharing it counts together. Call it inside
    /// ``commit(_:)``: the refusal is thrown as a ``Refusal`` so nothing else of the request is written.
    func rateLimit(_ bucket: String, name: String, limit: Int, window: TimeInterval, on db: any SQLDatabase) async throws {
        let now = self.now.millisecondsSince1970
        let windowLength = Int64(window * 1000)
        // One statement: start the bucket, restart its window when it has passed (or the clock went back), or count
        // one more hit in it (`excluded` is the row that was to be inserted: now). Hits past the limit are counted
        // too; only the comparison below refuses.
        let row = try await db.first(Self.countHit(bucket, now, windowLength, windowLength))
        guard let row else { throw APIError.internalError }
        let start = try row.decode(column: "window_start", as: Int64.self)
        let hits = try row.decode(column: "hits", as: Int64.self)
        guard hits <= Int64(limit) else {
            let seconds = max(1, (start + windowLength - now + 999) / 1000)
            metrics.rateLimited(name)
            throw Refusal(APIError(.rateLimited, "Too many requests. Try again in \(seconds) seconds."))
        }
    }

    /// Binds: bucket, now, window length, window length.
    private static let countHit = FixedSQL(
        """
        INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1)
        ON CONFLICT (bucket) DO UPDATE SET
            window_start = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN excluded.window_start ELSE rate_limits.window_start END,
            hits = CASE WHEN excluded.window_start - rate_limits.window_start >= ?
                OR excluded.window_start < rate_limits.window_start THEN 1 ELSE rate_limits.hits + 1 END
        RETURNING window_start, hits
        """)
}
