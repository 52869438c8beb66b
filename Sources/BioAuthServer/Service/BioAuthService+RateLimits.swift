import BioAuthCore
import Foundation
import SQLKit

extension BioAuthService {
    /// Counts one hit on `bucket` in a fixed window; refuses with `rate_limited` (429) past `limit` hits, counting the
    /// refusal under `name` (a fixed name for the kind of limit, for the metrics; never the bucket, which names clients).
    ///
    /// The counter lives in the database, so every server instance sharing it counts together. Call it inside
    /// ``commit(_:)``: the refusal is thrown as a ``Refusal`` so nothing else of the request is written.
    func rateLimit(_ bucket: String, name: ServerMetrics.RateLimit, limit: Int, window: TimeInterval, on db: any SQLDatabase) async throws {
        let now = self.now.millisecondsSince1970
        let windowLength = Int64(window * 1000)
        // Hits past the limit are counted too; only the comparison below refuses.
        let (start, hits) = try await db.rateLimits.hit(bucket, now: now, window: windowLength)
        guard hits <= Int64(limit) else {
            let seconds = max(1, (start + windowLength - now + 999) / 1000)
            metrics.rateLimited(name)
            throw Refusal(APIError(.rateLimited, "Too many requests. Try again in \(seconds) seconds.", retryAfter: Int(seconds)))
        }
    }
}
