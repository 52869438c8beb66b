import ArgumentParser
import BioAuthServer

/// The retention settings, shared by `bioauth serve` (its background job) and `bioauth admin purge`.
struct RetentionOptions: ParsableArguments {
    @Option(
        help: """
            Days tokens are kept after they expired or their session ended \
            (default \(ServerSettings.defaultText(of: "tokenRetentionDays"))).
            """
    )
    var tokenRetentionDays: String?

    @Option(
        help: """
            Days audit events are kept (default \(ServerSettings.defaultText(of: "auditRetentionDays")), 7 years; set your bank's policy).
            """
    )
    var auditRetentionDays: String?

    @Option(help: "Hours an Idempotency-Key is remembered, at least 1 (default \(ServerSettings.defaultText(of: "idempotencyKeyRetentionHours"))).")
    var idempotencyKeyRetentionHours: String?

    @Option(
        help: """
            Days a webhook event is kept after all its deliveries ended, at least 1 \
            (default \(ServerSettings.defaultText(of: "webhookRetentionDays"))).
            """
    )
    var webhookRetentionDays: String?

    @Option(
        help: """
            How long a purge rests after each batch, as a multiple of the batch's time, \(RetentionPolicy.batchRestsText) \
            (default \(ServerSettings.defaultText(of: "retentionBatchRest")); 0: no rest).
            """
    )
    var retentionBatchRest: String?

    @Option(
        help: """
            Rows a purge deletes per batch, \(RetentionPolicy.batchSizesText) \
            (default \(RetentionPolicy.defaultBatchSizesText); larger clears a backlog faster, and slows requests more).
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
