import ArgumentParser
import BioAuthServer
import Foundation

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measures biometric sign-in and payment throughput and latency against the P-256 verify rate.",
        discussion: """
            Starts a server in this process on loopback over a SQLite file with production settings (or, with \
            --server-process, as a separate `bioauth serve` process; or drives --server), enrolls simulated devices \
            with software keys, then runs biometric sign-ins and payment authorizations from concurrent devices for \
            a fixed time after a warm-up. Prints throughput, latency percentiles (HDR histogram), errors by code, \
            CPU time per operation, peak memory and the raw P-256 verify rate of one core; writes bench-result.json \
            and bench-latency.svg to --output. Build with -c release for real numbers.
            """
    )

    @Option(help: "Simulated devices to enroll (at least --concurrency).") var devices = 64
    @Option(help: "Devices driving the server at once.") var concurrency = 64
    @Option(
        help:
            "Open loop: start this many operations per second whatever the latency, and measure each from when it was due (default: closed loop, each device starting its next operation when its last one ends). --concurrency bounds how many run at once."
    )
    var rate: Double?
    @Option(help: "Measured seconds.") var duration: Double = 10
    @Option(
        help:
            "Measure exactly this many operations after the warm-up instead of --duration seconds (closed loop only); the measured time is the time they took."
    )
    var operations: Int?
    @Option(help: "Warm-up seconds, not measured.") var warmup: Double = 2
    @Option(
        help:
            "signin, payment, both, baseline (two readiness checks, each a database round trip, per operation: what the HTTP stack costs without a sign-in's work), or challenge (a sign-in challenge alone per operation: the first of a sign-in's two requests)."
    )
    var mix = "both"
    @Option(help: "Concurrent password sign-in workers beside the biometric ones (bcrypt at --bcrypt-cost).") var passwordWorkers = 0
    @Option(help: "bcrypt cost of the server the bench starts (12 as in production).") var bcryptCost = 12
    @Option(
        help:
            "Drive this running server instead (its rate limits apply: start it with --signin-challenge-limit 1000000 --signin-client-limit 1000000 to measure sign-ins or challenges; for --mix payment, register merchant-coffee-042 with bioauth admin payee register)."
    ) var server: String?
    @Flag(
        help:
            "Run the server as a separate `bioauth serve` process on loopback, so its CPU time and memory are measured apart from the load generator's."
    )
    var serverProcess = false
    @Option(
        help:
            "With --server-process: start this many `bioauth serve` processes on the one database (a postgres:// --database when more than one); the workers take them in turn."
    )
    var instances = 1
    @Option(
        help:
            "With --server-process: let each server process run only this share of the time (0-1], stopping and continuing it on a 20 ms period, so that on a machine with few cores the instances, not the database, limit throughput; the CPU each used is reported (Linux)."
    )
    var serverCPUShare: Double?
    @Option(help: "The started server's database: a SQLite path or a postgres:// URL (default: a temporary SQLite file).") var database: String?
    @Option(
        help:
            "The started server's seconds between retention purges (default 3600): a short one makes it purge a loaded database's backlog during the run."
    )
    var retentionInterval: Double?
    @Option(
        help:
            "The started server's rows per purge batch (its --retention-batch-size, \(RetentionPolicy.batchSizesText); default \(RetentionPolicy.defaultBatchSizesText))."
    )
    var retentionBatchSize: Int?
    @Option(
        help:
            "The started server's rest after each full purge batch, as a multiple of the batch's time (its --retention-batch-rest, \(RetentionPolicy.batchRestsText); default \(ServerSettings.defaultText(of: "retentionBatchRest")))."
    )
    var retentionBatchRest: Double?
    @Flag(
        help:
            "Subscribe a webhook endpoint to payment.authorized and device.registered, as a bank's backend would (a receiver in this process, on loopback, that checks each delivery's signature), so the payments write to the outbox and the server delivers what they write."
    )
    var webhooks = false
    @Option(help: "On PostgreSQL, the started server's most database connections (its --database-connections).")
    var databaseConnections = ServerConfiguration().databaseConnections
    @Option(
        help:
            "Also report each operation per window of this many seconds of the measured phase (by when it began or was due): throughput, p50, p99, max and errors, to see what a purge or a vacuum during the run does to them."
    )
    var series: Double?
    @Option(help: "Where to write bench-result.json and bench-latency.svg.") var output = "."
    @Flag(help: "No progress lines.") var quiet = false
    @Flag(
        help:
            "Exit with status 1 when any operation failed with a server error (internal_error, not_ready) or never got an answer (transport_error), or, with --webhooks, a delivery's signature did not verify: load must make the server slower, never wrong. Refusals such as rate_limited do not count."
    )
    var failOnServerErrors = false

    func validate() throws {
        guard devices >= 1, concurrency >= 1, duration > 0, warmup >= 0, passwordWorkers >= 0 else {
            throw ValidationError("devices and concurrency must be at least 1, duration positive, warm-up and password workers not negative")
        }
        if let rate, !(rate > 0 && rate.isFinite) { throw ValidationError("rate must be a positive number of operations per second") }
        if let operations, operations < 1 { throw ValidationError("operations must be at least 1") }
        if operations != nil, rate != nil { throw ValidationError("--operations counts a closed-loop run; --rate runs open loop for --duration") }
        guard BenchOptions.Mix(rawValue: mix) != nil else { throw ValidationError("mix must be one of \(BenchOptions.Mix.names)") }
        let costs = ServerConfiguration.bcryptCostRange
        guard costs.contains(bcryptCost) else { throw ValidationError("bcrypt cost must be \(costs.lowerBound)-\(costs.upperBound)") }
        let pools = ServerConfiguration.databaseConnectionsRange
        guard pools.contains(databaseConnections) else {
            throw ValidationError("database connections must be \(pools.lowerBound)-\(pools.upperBound)")
        }
        if let server, URL(string: server)?.scheme?.hasPrefix("http") != true { throw ValidationError("--server must be an http(s) URL") }
        guard (1...8).contains(instances) else { throw ValidationError("instances must be 1-8") }
        if instances > 1 {
            guard serverProcess, let database, DatabaseDialect(location: database) == .postgres else {
                throw ValidationError("--instances above 1 needs --server-process and a postgres:// --database: instances share one database")
            }
        }
        if let serverCPUShare {
            guard serverProcess else { throw ValidationError("--server-cpu-share paces the server processes the bench starts: add --server-process") }
            guard serverCPUShare > 0, serverCPUShare <= 1 else { throw ValidationError("server CPU share must be more than 0 and at most 1") }
            #if !canImport(Glibc)
            throw ValidationError("--server-cpu-share works on Linux only")
            #endif
        }
        if let series, !(series > 0 && series.isFinite) { throw ValidationError("series must be a positive number of seconds") }
        if let retentionInterval, !(retentionInterval > 0 && retentionInterval.isFinite) {
            throw ValidationError("retention interval must be a positive number of seconds")
        }
        // The purge's batches are checked as the server checks them, with its messages.
        var purging = ServerConfiguration()
        purging.retention.batchSize = retentionBatchSize
        if let retentionBatchRest { purging.retention.batchRest = retentionBatchRest }
        do { try purging.validate() } catch let error as ConfigurationError { throw ValidationError(error.message) }
        let retentionSet = retentionInterval != nil || retentionBatchSize != nil || retentionBatchRest != nil
        if server != nil, serverProcess || database != nil || retentionSet || webhooks {
            throw ValidationError(
                "--server drives a running server: --server-process, --database, --retention-* and --webhooks are for the server the bench starts"
            )
        }
    }

    func run() async throws {
        var options = BenchOptions()
        options.devices = devices
        options.concurrency = concurrency
        options.rate = rate
        options.duration = duration
        options.operations = operations
        options.warmup = warmup
        options.mix = BenchOptions.Mix(rawValue: mix) ?? .both
        options.passwordWorkers = passwordWorkers
        options.bcryptCost = bcryptCost
        options.server = server.flatMap(URL.init(string:))
        options.serverProcess = serverProcess
        options.instances = instances
        options.serverCPUShare = serverCPUShare
        options.database = database
        options.databaseConnections = databaseConnections
        options.retentionInterval = retentionInterval
        options.retentionBatchSize = retentionBatchSize
        options.retentionBatchRest = retentionBatchRest
        options.webhooks = webhooks
        options.seriesSeconds = series
        options.progress = !quiet
        let quiet = self.quiet
        let result = try await BenchRunner(options: options, log: { line in if !quiet { print(line) } }).run()
        let report = BenchReport(result: result)
        print(report.text)
        let folder = URL(fileURLWithPath: output)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try report.json().write(to: folder.appendingPathComponent("bench-result.json"))
        try Data(report.svg().utf8).write(to: folder.appendingPathComponent("bench-latency.svg"))
        print("wrote \(folder.appendingPathComponent("bench-result.json").path) and bench-latency.svg")
        if failOnServerErrors, let failure = result.serverFailure {
            print("bench: " + failure)
            throw ExitCode(1)
        }
    }
}

extension BenchResult {
    /// The errors `--fail-on-server-errors` fails on: the server's own failures, not its refusals.
    static let serverErrors: Set<String> = ["internal_error", "not_ready", "transport_error"]

    /// Why `--fail-on-server-errors` fails this run, or `nil`: any operation that failed with a server error
    /// (``serverErrors``), else, with `--webhooks`, any delivery whose signature did not verify.
    var serverFailure: String? {
        let failed = operations.values.reduce(into: [String: Int]()) { total, operation in
            for (code, count) in operation.errors where Self.serverErrors.contains(code) { total[code, default: 0] += count }
        }
        if !failed.isEmpty {
            return "server errors under load: " + failed.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }
        if let unverified = webhooks?.unverified, unverified > 0 {
            return "\(unverified) webhook deliveries under load with a signature that did not verify"
        }
        return nil
    }
}
