import ArgumentParser
import BioAuthServer

/// The retention settings, shared by `bioauth serve` (its background job) and `bioauth admin purge`.
struct RetentionOptions: ParsableArguments {
    @Option(help: "Days tokens are kept after they expired or their session ended (default 30).")
    var tokenRetentionDays: Double?

    @Option(help: "Days audit events are kept (default 2557, 7 years; set your bank's policy).")
    var auditRetentionDays: Double?

    @Option(help: "Hours an Idempotency-Key is remembered, at least 1 (default 24).")
    var idempotencyKeyRetentionHours: Double?

    /// Sets `policy` from the options, then the environment (`BIOAUTH_TOKEN_RETENTION_DAYS`,
    /// `BIOAUTH_AUDIT_RETENTION_DAYS`, `BIOAUTH_IDEMPOTENCY_KEY_RETENTION_HOURS`).
    func apply(to policy: inout RetentionPolicy, environment: [String: String]) throws {
        func number(_ option: Double?, _ name: String) throws -> Double? {
            if let option { return option }
            guard let text = environment[name] else { return nil }
            guard let value = Double(text), value.isFinite else { throw ValidationError("\(name) must be a number, not \(text)") }
            return value
        }
        if let days = try number(tokenRetentionDays, "BIOAUTH_TOKEN_RETENTION_DAYS") { policy.tokens = days * 86_400 }
        if let days = try number(auditRetentionDays, "BIOAUTH_AUDIT_RETENTION_DAYS") { policy.auditEvents = days * 86_400 }
        if let hours = try number(idempotencyKeyRetentionHours, "BIOAUTH_IDEMPOTENCY_KEY_RETENTION_HOURS") { policy.idempotencyKeys = hours * 3600 }
    }
}
