import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Crypto
import Foundation
import Histogram
import Logging
import OpenAPIAsyncHTTPClient

/// One operation's results.
struct OperationResult: Sendable {
    /// Latencies in µs, up to ``highestMicros``; a longer one is recorded as that (an open-loop run far past capacity
    /// queues its last operations that long), never dropped, so every operation is counted.
    var histogram = Histogram<UInt64>(highestTrackableValue: highestMicros, numberOfSignificantValueDigits: .three)
    /// One hour.
    static let highestMicros: UInt64 = 3_600_000_000
    var errors: [String: Int] = [:]
    /// With ``BenchOptions/seriesSeconds``: the same operations window by window.
    var series: LatencySeries?

    /// Counts a success that took `micros`: longer than ``highestMicros`` is counted as that.
    mutating func recordSuccess(micros: UInt64) { _ = histogram.record(min(micros, Self.highestMicros)) }

    init(seriesSeconds: Double? = nil) {
        series = seriesSeconds.map(LatencySeries.init(seconds:))
    }

    mutating func merge(_ other: OperationResult) {
        histogram.add(other.histogram)
        errors.merge(other.errors, uniquingKeysWith: +)
        if let other = other.series {
            if series == nil { series = LatencySeries(seconds: other.seconds) }
            series?.merge(other)
        }
    }
}

/// Everything one run measured.
struct BenchResult: Sendable {
    var options: BenchOptions
    var measuredSeconds: Double
    var operations: [String: OperationResult]
    var rawVerifyPerSecond: Double
    /// Of the server processes together with ``BenchOptions/serverProcess``, else of this process (server and load
    /// generator).
    var peakResidentBytes: Int?
    var enrollmentSeconds: Double
    var cores: Int
    /// CPU seconds the server processes used together in the measured phase (only with ``BenchOptions/serverProcess``).
    var serverCPUSeconds: Double?
    /// CPU seconds this process used in the measured phase: the load generator, and the server when it runs here.
    var benchCPUSeconds: Double?
    /// CPU seconds the server's database thread (SQLite's, ``SQLiteDatabaseExecutor/threadName``) used in the measured
    /// phase; `nil` for an external server or PostgreSQL.
    var databaseThreadCPUSeconds: Double?
    /// On PostgreSQL (`--database postgres://…`): what the database did in the measured phase.
    var postgres: PostgresUse?
    /// With ``BenchOptions/webhooks``: what the bank's receiver got (``WebhookUse``).
    var webhooks: WebhookUse? = nil

    /// Where the server ran.
    var serverPlacement: ServerPlacement {
        options.server != nil ? .external : options.serverProcess ? .childProcess : .inProcess
    }

    enum ServerPlacement: String, Sendable {
        case inProcess = "in_process"
        case childProcess = "child_process"
        case external
    }
}

/// CPU and memory measured during the measured phase.
struct MeasuredUse: Sendable {
    var peakResidentBytes: Int?
    var serverCPUSeconds: Double?
    var benchCPUSeconds: Double?
    var databaseThreadCPUSeconds: Double?
    var postgres: PostgresUse?
    /// Webhook deliveries the bench's receiver got in the measured phase (``BenchOptions/webhooks``).
    var webhookDeliveries: Int? = nil
}

/// The webhook deliveries the bench's receiver got (``BenchOptions/webhooks``), retries included.
struct WebhookUse: Sendable {
    /// Deliveries received in the measured phase.
    var measured: Int
    /// Deliveries from the warm-up to the end whose signature did not verify with the subscription's secret: none,
    /// unless something is wrong (then `--fail-on-server-errors` fails the run: ``BenchResult/serverFailure``).
    var unverified: Int
}

/// What PostgreSQL did in the measured phase: its transactions and statements (``PostgresActivity``), the statements the
/// servers sent, and the CPU time of the `postgres` processes when the database runs on this machine.
struct PostgresUse: Sendable {
    var activity: PostgresActivity
    /// CPU seconds of every `postgres` process on this machine; `nil` when none runs here.
    var cpuSeconds: Double?
    /// Statements the servers the bench started sent, `BEGIN` and `COMMIT` included (each one round trip), by their
    /// own count (`bioauth_database_statements_total`); `nil` when any did not say (an older binary).
    var statementsSent: Int64? = nil
}
