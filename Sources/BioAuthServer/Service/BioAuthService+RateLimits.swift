import BioAuthCore
import Foundation
import SQLKit

extension BioAuthService {
    /// Counts one hit on `bucket` in a fixed window; refuses with `rate_limited` (429) past `limit` hits.
    ///
    /// The counter lives in the database, so every server instance sharing it counts together. Call it inside
    /// ``commit(_:)``: the refusal is thrown as a ``Refusal`` so nothing else of the request is written.
    func rateLimit(_ bucket: String, limit: Int, window: TimeInterval, on db: any SQLDatabase) async throws {
        let now = self.now.millisecondsSince1970
        let windowLength = Int64(window * 1000)
        let row = try await db.select().columns("window_start", "hits").from("rate_limits").where("bucket", .equal, bucket).first()
        guard let row else {
            try await db.insert(into: "rate_limits").columns("bucket", "window_start", "hits")
                .values(SQLBind(bucket), SQLBind(now), SQLBind(1)).run()
            return
        }
        let start = try row.decode(column: "window_start", as: Int64.self)
        let hits = try row.decode(column: "hits", as: Int.self)
        if now - start >= windowLength || now < start {
            try await db.update("rate_limits").set("window_start", to: now).set("hits", to: 1).where("bucket", .equal, bucket).run()
            return
        }
        guard hits < limit else {
            let seconds = max(1, (start + windowLength - now + 999) / 1000)
            throw Refusal(APIError(.rateLimited, "Too many requests. Try again in \(seconds) seconds."))
        }
        try await db.update("rate_limits").set("hits", to: hits + 1).where("bucket", .equal, bucket).run()
    }
}
