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
        if let refusal = refusal(hits: hits, limit: limit, windowStart: start, windowLength: windowLength, now: now, name: name) {
            throw Refusal(refusal)
        }
    }

    /// The same limit for a bucket many concurrent requests share (one client address, behind which a carrier-grade NAT
    /// or a corporate proxy may put thousands of customers): counted in a statement of its own before the request's unit
    /// of work (``DatabaseExecutor/standalone(_:)``), so the shared bucket is never part of a longer transaction that would
    /// make every other request behind that address conflict with it, and on PostgreSQL in several rows
    /// (``RateLimitsTable/hit(shared:limit:then:now:window:engine:)``), so that no row takes every hit. Call it before
    /// ``commit(_:)``. The hit counts whatever the request's outcome, as a hit inside the unit of work does; a refused one
    /// is not counted.
    func rateLimitShared(_ bucket: String, name: ServerMetrics.RateLimit, limit: Int, window: TimeInterval) async throws {
        let now = self.now.millisecondsSince1970
        let windowLength = Int64(window * 1000)
        let engine = database.dialect
        let hit = try await database.standalone { db in
            try await db.rateLimits.hit(shared: bucket, limit: limit, then: nil, now: now, window: windowLength, engine: engine)
        }
        if case .full(let until) = hit { throw refusal(until: until, now: now, name: name) }
    }

    /// ``rateLimitShared(_:name:limit:window:)`` on `shared`, then, while `shared` has room, ``rateLimit(_:name:limit:window:on:)``
    /// on `bucket`, in one statement on PostgreSQL: for a unit of work whose statements each commit on their own
    /// (``TransactionIsolation/eachStatement``), so the shared rows are never held for longer than that statement. A hit on
    /// `bucket` is not counted once `shared` refuses, so a flood from one client makes no more rows than its limit allows.
    func rateLimit(
        shared: String,
        name sharedName: ServerMetrics.RateLimit,
        limit sharedLimit: Int,
        then bucket: String,
        name bucketName: ServerMetrics.RateLimit,
        limit bucketLimit: Int,
        window: TimeInterval,
        on db: any SQLDatabase
    ) async throws {
        let now = self.now.millisecondsSince1970
        let windowLength = Int64(window * 1000)
        let hit = try await db.rateLimits.hit(
            shared: shared,
            limit: sharedLimit,
            then: bucket,
            now: now,
            window: windowLength,
            engine: database.dialect
        )
        switch hit {
        case .full(let until):
            throw Refusal(refusal(until: until, now: now, name: sharedName))
        case .counted(let counted):
            // `bucket`'s hits, counted with the shared bucket's.
            if let counted,
                let refusal = refusal(
                    hits: counted.hits,
                    limit: bucketLimit,
                    windowStart: counted.windowStart,
                    windowLength: windowLength,
                    now: now,
                    name: bucketName
                )
            {
                throw Refusal(refusal)
            }
        }
    }

    /// `rate_limited` with the seconds until the window ends, when `hits` is past `limit`; counted under `name`.
    private func refusal(hits: Int64, limit: Int, windowStart: Int64, windowLength: Int64, now: Int64, name: ServerMetrics.RateLimit) -> APIError? {
        guard hits > Int64(limit) else { return nil }
        return refusal(until: windowStart + windowLength, now: now, name: name)
    }

    /// `rate_limited` with the seconds until `until`, when there is room again; counted under `name`.
    func rateLimitRefusal(until: Int64, now: Int64, name: ServerMetrics.RateLimit) -> APIError { refusal(until: until, now: now, name: name) }

    /// `rate_limited` with the seconds until `until`, when there is room again; counted under `name`.
    private func refusal(until: Int64, now: Int64, name: ServerMetrics.RateLimit) -> APIError {
        let seconds = max(1, (until - now + 999) / 1000)
        metrics.rateLimited(name)
        return APIError(.rateLimited, "Too many requests. Try again in \(seconds) seconds.", retryAfter: Int(seconds))
    }
}
