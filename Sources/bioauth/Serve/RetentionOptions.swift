import ArgumentParser
import BioAuthServer

/// The retention settings, shared by `bioauth serve` (its background job) and `bioauth admin purge`.
struct RetentionOptions: ParsableArguments {
    @Option(help: "Days tokens are kept after they expired or their session ended (default 30).")
    var tokenRetentionDays: String?

    @Option(help: "Days audit events are kept (default 2557, 7 years; set your bank's policy).")
    var auditRetentionDays: String?

    @Option(help: "Hours an Idempotency-Key is remembered, at least 1 (default 24).")
    var idempotencyKeyRetentionHours: String?

    @Option(help: "Days a webhook event is kept after all its deliveries ended, at least 1 (default 30).")
    var webhookRetentionDays: String?

    @Option(
        help: """
            How long a purge rests after each batch, as a multiple of the batch's time, \
            \(Int(RetentionPolicy.batchRests.lowerBound))-\(Int(RetentionPolicy.batchRests.upperBound)) \
            (default 2; 0: no rest).
            """
    )
    var retentionBatchRest: String?

    @Option(
        help: """
            Rows a purge deletes per batch, \(RetentionPolicy.batchSizes.lowerBound)-\(RetentionPolicy.batchSizes.upperBound) \
            (default 250; larger clears a backlog faster, and slows requests more).
            """
    )
    var retentionBatchSize: String?

    /// The options given, by setting key (``ServerSettings``).
    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["tokenRetentionDays"] = tokenRetentionDays
        flags["auditRetentionDays"] = auditRetentionDays
        flags["idempotencyKeyRetentionHours"] = idempotencyKeyRetentionHours
        flags["webhookRetentionDays"] = webhookRetentionDays
        flags["retentionBatchRest"] = retentionBatchRest
        flags["retentionBatchSize"] = retentionBatchSize
        return flags
    }
}
