import Foundation
import Histogram

/// The benchmark's results as a table, a JSON document and an SVG chart.
struct BenchReport {
    let result: BenchResult

    struct Row: Codable {
        var operation: String
        var ok: UInt64
        var perSecond: Double
        var fractionOfRawVerify: Double
        var p50Ms: Double
        var p90Ms: Double
        var p99Ms: Double
        var p999Ms: Double
        var maxMs: Double
        var errors: [String: Int]
    }

    var rows: [Row] {
        result.operations.keys.sorted().map { name in
            let operation = result.operations[name]!
            let histogram = operation.histogram
            let count = histogram.totalCount
            let perSecond = result.measuredSeconds > 0 ? Double(count) / result.measuredSeconds : 0
            func ms(_ value: UInt64) -> Double { count == 0 ? 0 : Double(value) / 1000 }
            return Row(
                operation: name,
                ok: count,
                perSecond: perSecond,
                fractionOfRawVerify: result.rawVerifyPerSecond > 0 ? perSecond / result.rawVerifyPerSecond : 0,
                p50Ms: ms(histogram.valueAtPercentile(50)),
                p90Ms: ms(histogram.valueAtPercentile(90)),
                p99Ms: ms(histogram.valueAtPercentile(99)),
                p999Ms: ms(histogram.valueAtPercentile(99.9)),
                maxMs: ms(histogram.max),
                errors: operation.errors
            )
        }
    }

    /// The table people read.
    var text: String {
        var lines = [
            String(
                format: "BioAuth bench: %d devices, %d concurrent, %@ after %.0f s warm-up, mix %@, %d password workers, %d cores",
                result.options.devices,
                result.options.concurrency,
                result.options.operations.map { String(format: "%d operations in %.1f s", $0, result.measuredSeconds) }
                    ?? String(format: "%.0f s", result.options.duration),
                result.options.warmup,
                result.options.mix.rawValue,
                result.options.passwordWorkers,
                result.cores
            ),
            String(format: "raw P-256 verify, one core: %.0f/s", result.rawVerifyPerSecond),
        ]
        if let rate = result.options.rate {
            lines.append(
                String(
                    format: "open loop: %.0f operations/s due, at most %d at once; latency from each operation's due time",
                    rate,
                    result.options.concurrency
                )
            )
        }
        lines += ["", "operation            ok/s     % raw  p50 ms  p90 ms  p99 ms  p99.9 ms  max ms  errors"]
        for row in rows {
            let errors = row.errors.isEmpty ? "-" : row.errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let name = row.operation.padding(toLength: 18, withPad: " ", startingAt: 0)
            lines.append(
                name
                    + String(
                        format: " %7.1f  %7.1f%%  %6.1f  %6.1f  %6.1f  %8.1f  %6.1f  ",
                        row.perSecond,
                        row.fractionOfRawVerify * 100,
                        row.p50Ms,
                        row.p90Ms,
                        row.p99Ms,
                        row.p999Ms,
                        row.maxMs
                    ) + errors
            )
        }
        lines += seriesLines
        if let cpu = cpuLine { lines.append("\n" + cpu) }
        if let database = databaseThreadLine { lines.append(database) }
        if let postgres = postgresLine { lines.append(postgres) }
        if let webhooks = result.webhooks, result.measuredSeconds > 0 {
            let perSecond = Double(webhooks.measured) / result.measuredSeconds
            let payments = result.operations[BenchOperation.payment.rawValue].map { Double($0.histogram.totalCount) / result.measuredSeconds }
            lines.append(
                String(format: "webhooks: %.1f deliveries/s received in the measured phase", perSecond)
                    + (payments.map { String(format: " (%.2f per payment authorized)", $0 > 0 ? perSecond / $0 : 0) } ?? "")
                    + (webhooks.unverified == 0 ? ", every signature verified" : ", \(webhooks.unverified) with a signature that did not verify")
            )
        }
        if let peak = result.peakResidentBytes {
            let whose =
                result.serverPlacement != .childProcess
                ? "(server and load generator, one process)"
                : result.options.instances > 1 ? "of the server processes together" : "of the server process"
            lines.append(String(format: "peak resident memory during the run %@: %.1f MB", whose, Double(peak) / 1_048_576))
        }
        return lines.joined(separator: "\n")
    }

    /// With `--series`: each operation's windows, in order.
    var series: [String: [LatencySeries.Row]] {
        result.operations.compactMapValues { $0.series?.rows(measuredSeconds: result.measuredSeconds) }
    }

    /// The `--series` table: one line per operation and window.
    var seriesLines: [String] {
        let series = self.series
        guard !series.isEmpty, let seconds = result.options.seriesSeconds else { return [] }
        var lines = [
            "",
            String(format: "per %g s of the measured phase, by when each operation began (open loop: was due):", seconds),
            "operation          from s     ok/s  p50 ms  p99 ms  max ms  errors",
        ]
        for name in series.keys.sorted() {
            for row in series[name] ?? [] {
                lines.append(
                    name.padding(toLength: 18, withPad: " ", startingAt: 0)
                        + String(
                            format: " %6.1f  %7.1f  %6.1f  %6.1f  %6.1f  %d",
                            row.fromSeconds,
                            row.perSecond,
                            row.p50Ms,
                            row.p99Ms,
                            row.maxMs,
                            row.errors
                        )
                )
            }
        }
        return lines
    }

    /// Successful operations of every kind in the measured phase.
    var successfulOperations: UInt64 { result.operations.values.reduce(0) { $0 + $1.histogram.totalCount } }

    /// CPU use in the measured phase: cores busy and CPU time per successful operation, for the server on its own
    /// when it ran as a separate process.
    var cpuLine: String? {
        guard result.measuredSeconds > 0, successfulOperations > 0 else { return nil }
        let operations = Double(successfulOperations)
        func use(_ seconds: Double) -> String {
            String(format: "%.2f cores, %.2f ms per operation", seconds / result.measuredSeconds, seconds / operations * 1000)
        }
        switch (result.serverPlacement, result.serverCPUSeconds, result.benchCPUSeconds) {
        case (.childProcess, let server?, let bench?) where server > 0:
            let perCore = operations / server
            return "CPU in the measured phase: " + serverProcesses + " " + use(server)
                + String(
                    format: " (%.0f operations per server core-second, %.1f%% of raw verify)",
                    perCore,
                    perCore / max(1, result.rawVerifyPerSecond) * 100
                )
                + "; load generator " + use(bench)
        case (.inProcess, _, let bench?):
            return "CPU in the measured phase (server and load generator, one process): " + use(bench)
        case (.external, _, let bench?):
            return "CPU in the measured phase: load generator " + use(bench) + " (the server's is not measured)"
        default:
            return nil
        }
    }

    /// `server process`, or `2 server processes together`, with the share of the time each was let run.
    var serverProcesses: String {
        let instances = max(1, result.options.instances)
        var text = instances > 1 ? "\(instances) server processes together" : "server process"
        if let share = result.options.serverCPUShare {
            text += String(format: instances > 1 ? " (each running %.2f of the time)" : " (running %.2f of the time)", share)
        }
        return text
    }

    /// The database thread's share: every unit of work runs on that one thread in turn, so its CPU time per operation
    /// bounds the operations per second of one server however many cores it has.
    var databaseThreadLine: String? {
        guard let seconds = result.databaseThreadCPUSeconds, seconds > 0, result.measuredSeconds > 0, successfulOperations > 0 else { return nil }
        let perOperation = seconds / Double(successfulOperations)
        return String(
            format:
                "database thread (runs every unit of work in turn): %.2f cores, %.3f ms per operation: a ceiling of about %.0f operations/s however many cores",
            seconds / result.measuredSeconds,
            perOperation * 1000,
            1 / perOperation
        )
    }

    /// PostgreSQL's share: transactions rolled back (each a retried serialization failure or deadlock) and statements per
    /// successful operation, the statements the servers sent (their round trips, `BEGIN` and `COMMIT` included, which
    /// `pg_stat_statements` leaves out once they run prepared), and the CPU time of the `postgres` processes when the
    /// database runs on this machine.
    var postgresLine: String? {
        guard let postgres = result.postgres, successfulOperations > 0, result.measuredSeconds > 0 else { return nil }
        let operations = Double(successfulOperations)
        var line = String(
            format: "PostgreSQL in the measured phase: %.2f commits and %.2f rollbacks per operation",
            Double(postgres.activity.commits) / operations,
            Double(postgres.activity.rollbacks) / operations
        )
        if let statements = postgres.activity.statements {
            line += String(format: ", %.1f statements per operation", Double(statements) / operations)
        } else {
            line += ", statements not counted (no pg_stat_statements in this database)"
        }
        if let sent = postgres.statementsSent {
            line += String(format: ", %.1f sent per operation (round trips: BEGIN and COMMIT included)", Double(sent) / operations)
        }
        if let cpu = postgres.cpuSeconds, cpu > 0 {
            line += String(format: "; postgres processes %.2f cores, %.2f ms per operation", cpu / result.measuredSeconds, cpu / operations * 1000)
        }
        return line
    }

    /// The JSON result file.
    func json() throws -> Data {
        struct Document: Codable {
            var devices: Int
            var concurrency: Int
            var ratePerSecond: Double?
            var durationSeconds: Double
            var warmupSeconds: Double
            var mix: String
            var passwordWorkers: Int
            var cores: Int
            var rawVerifyPerSecond: Double
            var enrollmentSeconds: Double
            var peakResidentBytes: Int?
            var serverPlacement: String
            var instances: Int
            var serverCPUShare: Double?
            var serverCPUSeconds: Double?
            var benchCPUSeconds: Double?
            var databaseThreadCPUSeconds: Double?
            var postgresCommits: Int64?
            var postgresRollbacks: Int64?
            var postgresStatements: Int64?
            var postgresStatementsSent: Int64?
            var postgresCPUSeconds: Double?
            var webhookDeliveries: Int?
            var webhookDeliveriesUnverified: Int?
            var successfulOperations: UInt64
            var operations: [Row]
            var latencyPercentilesMs: [String: [String: Double]]
            var seriesSeconds: Double?
            var series: [String: [LatencySeries.Row]]?
        }
        var percentiles: [String: [String: Double]] = [:]
        for (name, operation) in result.operations {
            var points: [String: Double] = [:]
            for p in Self.percentiles where operation.histogram.totalCount > 0 {
                points[String(p)] = Double(operation.histogram.valueAtPercentile(p)) / 1000
            }
            percentiles[name] = points
        }
        let document = Document(
            devices: result.options.devices,
            concurrency: result.options.concurrency,
            ratePerSecond: result.options.rate,
            durationSeconds: result.measuredSeconds,
            warmupSeconds: result.options.warmup,
            mix: result.options.mix.rawValue,
            passwordWorkers: result.options.passwordWorkers,
            cores: result.cores,
            rawVerifyPerSecond: result.rawVerifyPerSecond,
            enrollmentSeconds: result.enrollmentSeconds,
            peakResidentBytes: result.peakResidentBytes,
            serverPlacement: result.serverPlacement.rawValue,
            instances: result.options.instances,
            serverCPUShare: result.options.serverCPUShare,
            serverCPUSeconds: result.serverCPUSeconds,
            benchCPUSeconds: result.benchCPUSeconds,
            databaseThreadCPUSeconds: result.databaseThreadCPUSeconds,
            postgresCommits: result.postgres?.activity.commits,
            postgresRollbacks: result.postgres?.activity.rollbacks,
            postgresStatements: result.postgres?.activity.statements,
            postgresStatementsSent: result.postgres?.statementsSent,
            postgresCPUSeconds: result.postgres?.cpuSeconds,
            webhookDeliveries: result.webhooks?.measured,
            webhookDeliveriesUnverified: result.webhooks?.unverified,
            successfulOperations: successfulOperations,
            operations: rows,
            latencyPercentilesMs: percentiles,
            seriesSeconds: result.options.seriesSeconds,
            series: result.options.seriesSeconds == nil ? nil : series
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(document)
    }

    static let percentiles: [Double] = [0, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100]

    /// The latency distribution: latency (log scale) against percentile, one line per operation.
    func svg() -> String {
        let width = 720.0
        let height = 400.0
        let left = 70.0
        let right = 160.0
        let top = 30.0
        let bottom = 50.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
        // x: percentile on a "nines" scale (0, 90, 99, 99.9, 99.99) so the tail is visible.
        func x(_ percentile: Double) -> Double {
            let nines = min(4, -log10(max(1e-4, 1 - percentile / 100)))
            return left + nines / 4 * plotWidth
        }
        let all = result.operations.values.flatMap { op in Self.percentiles.map { Double(op.histogram.valueAtPercentile($0)) / 1000 } }.filter {
            $0 > 0
        }
        let low = max(0.01, (all.min() ?? 0.1))
        let high = max(low * 10, all.max() ?? 1)
        let (logLow, logHigh) = (log10(low), log10(high))
        func y(_ ms: Double) -> Double { top + plotHeight - (log10(max(ms, low)) - logLow) / (logHigh - logLow) * plotHeight }
        var svg = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" font-family="sans-serif" font-size="12">"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="\#(left)" y="18" font-size="14">BioAuth bench: latency by percentile (\#(result.options.concurrency) concurrent, \#(result.cores) cores)</text>"#,
            #"<line x1="\#(left)" y1="\#(top + plotHeight)" x2="\#(left + plotWidth)" y2="\#(top + plotHeight)" stroke="black"/>"#,
            #"<line x1="\#(left)" y1="\#(top)" x2="\#(left)" y2="\#(top + plotHeight)" stroke="black"/>"#,
        ]
        for label in [0.0, 90, 99, 99.9, 99.99] {
            svg.append(#"<text x="\#(x(label))" y="\#(top + plotHeight + 18)" text-anchor="middle">p\#(label == 0 ? "0" : String(label))</text>"#)
        }
        var tick = pow(10, floor(logLow))
        while tick <= high * 1.0001 {
            if tick >= low {
                svg.append(#"<line x1="\#(left - 4)" y1="\#(y(tick))" x2="\#(left + plotWidth)" y2="\#(y(tick))" stroke="lightgray"/>"#)
                svg.append(#"<text x="\#(left - 8)" y="\#(y(tick) + 4)" text-anchor="end">\#(tick < 1 ? String(tick) : String(Int(tick))) ms</text>"#)
            }
            tick *= 10
        }
        for (index, name) in result.operations.keys.sorted().enumerated() {
            let histogram = result.operations[name]!.histogram
            guard histogram.totalCount > 0 else { continue }
            let colour = colours[index % colours.count]
            let points = Self.percentiles.filter { $0 < 100 }.map { p in
                String(format: "%.1f,%.1f", x(p), y(Double(histogram.valueAtPercentile(p)) / 1000))
            }.joined(separator: " ")
            svg.append(#"<polyline fill="none" stroke="\#(colour)" stroke-width="2" points="\#(points)"/>"#)
            svg.append(#"<text x="\#(left + plotWidth + 10)" y="\#(top + 16 + Double(index) * 18)" fill="\#(colour)">\#(name)</text>"#)
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }
}
