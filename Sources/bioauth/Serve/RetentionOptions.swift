import ArgumentParser
import BioAuthServer

/// The retention settings, shared by `bioauth serve` (its background job) and `bioauth admin purge`.
struct RetentionOptions: ParsableArguments {
    @Option(
        help: """
            Days tokens are kept after they expired or their session ended \
            (default \(RetentionOptions.days(RetentionOptions.defaults.tokens))).
            """
    )
    var tokenRetentionDays: String?

    @Option(
        help: """
            Days audit events are kept (default \(RetentionOptions.days(RetentionOptions.defaults.auditEvents)), 7 years; set your bank's policy).
            """
    )
    var auditRetentionDays: String?

    @Option(help: "Hours an Idempotency-Key is remembered, at least 1 (default \(Int(RetentionOptions.defaults.idempotencyKeys / 3600))).")
    var idempotencyKeyRetentionHours: String?

    @Option(
        help: """
            Days a webhook event is kept after all its deliveries ended, at least 1 \
            (default \(RetentionOptions.days(RetentionOptions.defaults.webhookEvents))).
            """
    )
    var webhookRetentionDays: String?

    @Option(
        help: """
            How long a purge rests after each batch, as a multiple of the batch's time, \(RetentionPolicy.batchRestsText) \
            (default \(RetentionOptions.number(RetentionOptions.defaults.batchRest)); 0: no rest).
            """
    )
    var retentionBatchRest: String?

    @Option(
        help: """
            Rows a purge deletes per batch, \(RetentionPolicy.batchSizesText) \
            (default \(RetentionOptions.defaults.batchSize); larger clears a backlog faster, and slows requests more).
            """
    )
    var retentionBatchSize: String?

    /// The policy's defaults, which the help gives.
    private static let defaults = RetentionPolicy()

    /// `value` as the help writes it: `2`, not `2.0`.
    private static func number(_ value: Double) -> String { value == value.rounded() ? "\(Int(value))" : "\(value)" }

    /// Whole days in `interval`.
    private static func days(_ interval: Double) -> Int { Int(interval / 86_400) }

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
