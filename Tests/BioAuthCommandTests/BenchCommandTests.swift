import AsyncHTTPClient
import Foundation
import Logging
import SQLKit
import Testing

@testable import BioAuthServer
@testable import bioauth

#if canImport(Glibc)
import Glibc
#endif

@Suite("bioauth bench")
struct BenchCommandTests {
    @Test("a short run works: both operations succeed, the JSON and the SVG are written (no numbers asserted)")
    func smoke() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-smoke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let command = try BenchCommand.parse([
            // A fixed number of operations, not a time window: however loaded the machine, the run measures 12 (alternately
            // sign-ins and payments) and at least one password sign-in.
            "--devices", "3", "--concurrency", "2", "--operations", "12", "--warmup", "0", "--bcrypt-cost", "4",
            "--password-workers", "1", "--output", folder.path, "--quiet",
        ])
        try await command.run()
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("bench-result.json"))) as? [String: Any]
        let operations = try #require(json?["operations"] as? [[String: Any]])
        #expect(Set(operations.compactMap { $0["operation"] as? String }) == ["biometric_sign_in", "payment", "password_sign_in"])
        #expect(operations.allSatisfy { ($0["errors"] as? [String: Int])?.isEmpty == true })
        #expect(operations.filter { $0["operation"] as? String != "password_sign_in" }.allSatisfy { ($0["ok"] as? Int ?? 0) > 0 })
        #expect((json?["rawVerifyPerSecond"] as? Double ?? 0) > 0)
        #expect(json?["databaseThreadCPUSeconds"] is Double, "the in-process server's database thread is found and measured")
        let svg = try String(contentsOf: folder.appendingPathComponent("bench-latency.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("<polyline") && svg.hasSuffix("</svg>"))
    }

    @Test("the baseline mix runs two readiness checks per operation and reports them as one baseline operation")
    func baseline() async throws {
        let options = Self.countedRun(.baseline, operations: 10)
        let result = try await BenchRunner(options: options, log: { _ in }).run()
        #expect(Set(result.operations.keys) == ["baseline"])
        let baseline = try #require(result.operations["baseline"])
        #expect(baseline.errors.isEmpty && baseline.histogram.totalCount == 10, "exactly the 10 operations asked for")
        #expect(result.measuredSeconds > 0)
        #expect(BenchReport(result: result).text.contains("mix baseline"))
    }

    @Test("the challenge mix asks for one sign-in challenge per operation and signs nothing in")
    func challengeOnly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-challenge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bioauth.sqlite").path
        var result: BenchResult?
        try await LoopbackTestServer.with(database: path) { url in
            var options = Self.countedRun(.challenge, operations: 10)
            options.server = url
            result = try await BenchRunner(options: options, log: { _ in }).run()
        }
        let run = try #require(result)
        #expect(Set(run.operations.keys) == ["sign_in_challenge"])
        let challenges = try #require(run.operations["sign_in_challenge"])
        #expect(challenges.errors.isEmpty && challenges.histogram.totalCount == 10, "exactly the 10 operations asked for")
        #expect(BenchReport(result: run).text.contains("mix challenge"))

        let executor = try await openDatabase(path, logger: Logger(label: "test"))
        let counts = try await executor.transaction { db in
            func count(_ sql: SQLQueryString) async throws -> Int {
                try await db.raw(sql).first()?.decode(column: "n", as: Int.self) ?? -1
            }
            return (
                login: try await count("SELECT COUNT(*) AS n FROM challenges WHERE purpose = 'login'"),
                sessions: try await count("SELECT COUNT(*) AS n FROM sessions")
            )
        }
        try await executor.close()
        #expect(counts.login == 10, "one login challenge an operation")
        #expect(counts.sessions == 2, "only the two enrolment sign-ins (by password): no challenge was used to sign in")
    }

    @Test("an unknown mix is refused with a message that names every mix")
    func unknownMix() {
        #expect(BenchOptions.Mix.names == "signin, payment, both, baseline, challenge")
        do {
            _ = try BenchCommand.parse(["--mix", "everything"])
            Issue.record("--mix everything was accepted")
        } catch {
            #expect(BenchCommand.message(for: error).contains("mix must be one of signin, payment, both, baseline, challenge"))
        }
    }

    @Test("open loop: every operation due in the window is measured from when it was due, so an overloaded server's queue shows")
    func openLoop() async throws {
        // 5000 operations/s for 0.1 s on one connection: far more than it can do (a few hundred a second in a debug
        // build), so operations fall behind their due times, and the wait is in their latency. A closed loop would have
        // waited instead, and shown only the service time (a few milliseconds).
        var options = Self.shortRun(.baseline, duration: 0.1, warmup: 0)
        options.devices = 1
        options.concurrency = 1
        options.rate = 5000
        let result = try await BenchRunner(options: options, log: { _ in }).run()
        let overloaded = try #require(result.operations["baseline"])
        #expect(overloaded.histogram.totalCount + UInt64(overloaded.errors.values.reduce(0, +)) == 500, "5000/s for 0.1 s: all 500 measured")
        #expect(overloaded.histogram.valueAtPercentile(99) > 100_000, "queueing shows: p99 \(overloaded.histogram.valueAtPercentile(99)) µs")
        let report = BenchReport(result: result)
        #expect(report.text.contains("open loop: 5000 operations/s due") && report.text.contains("p99.9 ms"))
    }

    @Test("a success slower than the histogram's range is counted at its top, not dropped (a loaded open loop queues that long)")
    func slowSuccessCounted() {
        var result = OperationResult()
        result.recordSuccess(micros: 90_000_000)
        result.recordSuccess(micros: 2 * OperationResult.highestMicros)
        #expect(result.histogram.totalCount == 2)
        #expect(result.histogram.max >= 90_000_000, "\(result.histogram.max)")
    }

    @Test("the open-loop schedule hands out due times at the rate, in order, until the end")
    func schedule() {
        let start = ContinuousClock.now
        let schedule = OpenLoopSchedule(start: start, rate: 4)
        var due: [Duration] = []
        while let next = schedule.next(before: start + .seconds(1)) { due.append(next - start) }
        #expect(due == [.zero, .milliseconds(250), .milliseconds(500), .milliseconds(750)])
    }

    @Test("--series: the windows' operations add up to the run's, and the report and the JSON give them window by window")
    func seriesRun() async throws {
        var options = Self.countedRun(.signIn, operations: 12)
        options.seriesSeconds = 0.5
        let result = try await BenchRunner(options: options, log: { _ in }).run()
        let signIns = try #require(result.operations["biometric_sign_in"])
        let rows = try #require(signIns.series?.rows(measuredSeconds: result.measuredSeconds))
        #expect(rows.reduce(0) { $0 + $1.ok } == 12, "every measured sign-in is in exactly one window")
        #expect(rows.allSatisfy { $0.errors == 0 } && rows.first?.fromSeconds == 0)
        let report = BenchReport(result: result)
        #expect(report.text.contains("per 0.5 s of the measured phase"))
        let json = try JSONSerialization.jsonObject(with: report.json()) as? [String: Any]
        let series = try #require((json?["series"] as? [String: Any])?["biometric_sign_in"] as? [[String: Any]])
        #expect(series.count == rows.count && json?["seriesSeconds"] as? Double == 0.5)
    }

    @Test("a series' windows: exact nearest-rank percentiles, failures apart, an empty window in between shown as zeros")
    func seriesWindows() {
        var first = LatencySeries(seconds: 2)
        // Window 0 (0-2 s): 1..100 ms, one each; window 2 (4-6 s): one 7 ms success and a failure; window 1 empty.
        for ms in 1...100 { first.add(offset: Double(ms) / 100, micros: UInt64(ms) * 1000, failed: false) }
        var second = LatencySeries(seconds: 2)
        second.add(offset: 4.5, micros: 7000, failed: false)
        second.add(offset: 5.9, micros: 1, failed: true)
        first.merge(second)
        let rows = first.rows(measuredSeconds: 5)
        #expect(rows.map(\.fromSeconds) == [0, 2, 4])
        #expect(rows[0] == LatencySeries.Row(fromSeconds: 0, ok: 100, perSecond: 50, p50Ms: 50, p99Ms: 99, maxMs: 100, errors: 0))
        #expect(rows[1] == LatencySeries.Row(fromSeconds: 2, ok: 0, perSecond: 0, p50Ms: 0, p99Ms: 0, maxMs: 0, errors: 0))
        // The phase ended 1 s into the last window: one success in 1 s.
        #expect(rows[2] == LatencySeries.Row(fromSeconds: 4, ok: 1, perSecond: 1, p50Ms: 7, p99Ms: 7, maxMs: 7, errors: 1))
        #expect(LatencySeries(seconds: 1).rows(measuredSeconds: 1).isEmpty)
    }

    @Test("--webhooks subscribes the bench's receiver through the service API, and the report says what it received")
    func webhooks() async throws {
        var options = Self.countedRun(.payment, operations: 10)
        options.webhooks = true
        // The subscription is made as a bank's backend makes it (service client, token, endpoint to a loopback receiver the
        // server must be allowed to reach): any step refused would fail the run.
        let result = try await BenchRunner(options: options, log: { _ in }).run()
        #expect(result.operations["payment"]?.errors.isEmpty == true)
        let webhooks = try #require(result.webhooks)
        #expect(webhooks.unverified == 0, "every delivery that arrived was signed with the subscription's secret")
        #expect(BenchReport(result: result).text.contains("webhooks: "))
    }

    @Test(
        "bad options are refused before anything starts",
        arguments: [
            ["--concurrency", "0"], ["--duration", "0"], ["--server", "ftp://x"], ["--bcrypt-cost", "2"],
            ["--bcrypt-cost", "31"], ["--bcrypt-cost", "17"],
            ["--server", "http://127.0.0.1:8080", "--server-process"], ["--rate", "0"], ["--rate", "-5"],
            ["--server", "http://127.0.0.1:8080", "--database", "x.sqlite"], ["--operations", "0"], ["--operations", "5", "--rate", "100"],
            // Instances share one PostgreSQL database; a CPU share holds server processes the bench starts.
            ["--instances", "2"], ["--instances", "2", "--server-process"], ["--instances", "2", "--server-process", "--database", "x.sqlite"],
            ["--instances", "0", "--server-process"], ["--instances", "9", "--server-process", "--database", "postgres://db/x"],
            ["--retention-interval", "0"], ["--server", "http://127.0.0.1:8080", "--retention-interval", "5"],
            ["--retention-batch-size", "9"], ["--retention-batch-size", "10001"], ["--retention-batch-rest", "-1"],
            ["--retention-batch-rest", "11"], ["--retention-batch-rest", "nan"],
            ["--server", "http://127.0.0.1:8080", "--retention-batch-size", "100"],
            ["--server", "http://127.0.0.1:8080", "--retention-batch-rest", "1"],
            ["--server-cpu-share", "0.5"], ["--server-cpu-share", "0", "--server-process"], ["--server-cpu-share", "1.5", "--server-process"],
            ["--server", "http://127.0.0.1:8080", "--webhooks"], ["--series", "0"], ["--series", "-1"], ["--series", "inf"],
        ]
    )
    func refused(arguments: [String]) {
        #expect(throws: (any Error).self) { try BenchCommand.parse(arguments) }
    }

    @Test("the started server's purge batches are checked as the server checks them: its message, the edges of its ranges accepted")
    func purgeBatchOptions() throws {
        let error = #expect(throws: (any Error).self) { try BenchCommand.parse(["--retention-batch-size", "9"]) }
        #expect(error.map { BenchCommand.message(for: $0) } == "retention batch size must be 10-10000 rows")
        let edges = try BenchCommand.parse(["--retention-batch-size", "10", "--retention-batch-rest", "0"])
        #expect(edges.retentionBatchSize == 10 && edges.retentionBatchRest == 0)
        #expect(try BenchCommand.parse(["--retention-batch-size", "10000", "--retention-batch-rest", "10"]).retentionBatchSize == 10_000)
    }

    /// A run of two devices, two at a time, enrolled at bcrypt cost 4, printing nothing.
    static func shortRun(_ mix: BenchOptions.Mix, duration: TimeInterval, warmup: TimeInterval) -> BenchOptions {
        var options = BenchOptions()
        options.devices = 2
        options.concurrency = 2
        options.duration = duration
        options.warmup = warmup
        options.mix = mix
        options.bcryptCost = 4
        options.progress = false
        return options
    }

    /// A run of two devices, two at a time, that measures exactly `operations` operations with no warm-up, however long
    /// they take: a loaded machine makes it slower, never empty.
    static func countedRun(_ mix: BenchOptions.Mix, operations: Int) -> BenchOptions {
        var options = shortRun(mix, duration: 10, warmup: 0)
        options.operations = operations
        return options
    }

    /// The `bioauth` executable `swift build` put beside this test binary (Linux: read from /proc).
    static var builtExecutable: URL? {
        guard let testBinary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let executable = URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("bioauth")
        return FileManager.default.isExecutableFile(atPath: executable.path) ? executable : nil
    }

    @Test(
        "with --server-process the server runs as its own process: its CPU time and memory are reported apart from the load generator's",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func serverProcess() async throws {
        var options = Self.countedRun(.both, operations: 10)
        options.serverProcess = true
        let executable = try #require(Self.builtExecutable, "swift build puts bioauth beside the tests")
        options.serverExecutable = executable
        let result = try await BenchRunner(options: options, log: { _ in }).run()
        #expect(result.serverPlacement == .childProcess)
        #expect(!result.operations.isEmpty && result.operations.values.allSatisfy { $0.errors.isEmpty && $0.histogram.totalCount > 0 })
        #expect((result.serverCPUSeconds ?? 0) > 0 && (result.benchCPUSeconds ?? 0) > 0)
        #expect((result.peakResidentBytes ?? 0) > 0)
        #expect(result.databaseThreadCPUSeconds != nil, "the server process's database thread is found and measured")
        let text = BenchReport(result: result).text
        // The report is printed with a failure: this line was once missing under a double load, with every number above
        // in place (seen once in six runs of two suites at a time; the cause is not known yet).
        #expect(text.contains("CPU in the measured phase: server process") && text.contains("of the server process"), "\(text)")
    }

    @Test("two instances on one PostgreSQL database are accepted, each paced to a share of the time")
    func instancesAccepted() throws {
        let command = try BenchCommand.parse([
            "--server-process", "--instances", "2", "--database", "postgres://db/x", "--server-cpu-share", "0.25",
        ])
        #expect(command.instances == 2 && command.serverCPUShare == 0.25)
    }

    @Test("with two paced instances the report gives their CPU together and the share of the time each ran")
    func instancesReported() {
        var operation = OperationResult()
        for _ in 0..<1000 { _ = operation.histogram.record(20_000) }
        var options = BenchOptions()
        options.serverProcess = true
        options.instances = 2
        options.serverCPUShare = 0.25
        let result = BenchResult(
            options: options,
            measuredSeconds: 10,
            operations: ["biometric_sign_in": operation],
            rawVerifyPerSecond: 17_000,
            peakResidentBytes: 100 * 1_048_576,
            enrollmentSeconds: 1,
            cores: 2,
            serverCPUSeconds: 5,
            benchCPUSeconds: 1,
            databaseThreadCPUSeconds: nil
        )
        let text = BenchReport(result: result).text
        #expect(
            text.contains("CPU in the measured phase: 2 server processes together (each running 0.25 of the time) 0.50 cores, 5.00 ms per operation"),
            "\(text)"
        )
        #expect(text.contains("peak resident memory during the run of the server processes together: 100.0 MB"), "\(text)")
    }

    @Test("--fail-on-server-errors fails on a server error or a forged webhook signature, never on a refusal")
    func serverFailures() {
        var refused = OperationResult()
        refused.errors = ["rate_limited": 40, "challenge_expired": 2]
        func result(_ operations: [String: OperationResult], unverified: Int? = nil) -> BenchResult {
            BenchResult(
                options: BenchOptions(),
                measuredSeconds: 10,
                operations: operations,
                rawVerifyPerSecond: 17_000,
                peakResidentBytes: nil,
                enrollmentSeconds: 1,
                cores: 2,
                serverCPUSeconds: nil,
                benchCPUSeconds: nil,
                databaseThreadCPUSeconds: nil,
                webhooks: unverified.map { WebhookUse(measured: 100, unverified: $0) }
            )
        }
        #expect(result(["biometric_sign_in": refused], unverified: 0).serverFailure == nil)

        var failing = refused
        failing.errors["internal_error"] = 3
        var unanswered = OperationResult()
        unanswered.errors = ["transport_error": 1]
        #expect(
            result(["biometric_sign_in": failing, "payment_authorization": unanswered]).serverFailure
                == "server errors under load: 3 internal_error, 1 transport_error"
        )
        #expect(
            result(["biometric_sign_in": refused], unverified: 2).serverFailure
                == "2 webhook deliveries under load with a signature that did not verify"
        )
    }

    @Test(
        "a CPU cap lets a busy process run only its share of the time, and leaves it running when it stops",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func cpuCap() async throws {
        let busy = Process()
        busy.executableURL = URL(fileURLWithPath: "/bin/sh")
        busy.arguments = ["-c", "while :; do :; done"]
        busy.standardOutput = FileHandle.nullDevice
        busy.standardError = FileHandle.nullDevice
        try busy.run()
        // SIGKILL: the shell started this way does not end on SIGTERM, and would outlive the tests.
        defer {
            kill(busy.processIdentifier, SIGKILL)
            busy.waitUntilExit()
        }
        let before = try #require(ProcessStats.cpuSeconds(pid: busy.processIdentifier))
        let started = ContinuousClock.now
        let cap = CPUCap(pids: [busy.processIdentifier], share: 0.1)
        try await Task.sleep(for: .seconds(2))
        cap.stop()
        let wall = (ContinuousClock.now - started).seconds
        let used = try #require(ProcessStats.cpuSeconds(pid: busy.processIdentifier)) - before
        // Uncapped it would use up to a whole core over the wall time; held to a tenth, about a tenth of it. A loaded
        // machine gives it less, never more, so only the ceiling is asserted, with room for late wake-ups.
        #expect(used < wall * 0.5, "used \(used) s of CPU in \(wall) s")
        // Continued when the cap stopped: it runs again (state R or S in /proc, not T for stopped).
        let stat = try String(contentsOfFile: "/proc/\(busy.processIdentifier)/stat", encoding: .utf8)
        let state = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ").first
        #expect(state != "T", "the process was left stopped")
    }

    /// A run's result for the report's lines: 1 000 biometric sign-ins of 20 ms each in 10 s, the bench's CPU only.
    static func thousandSignIns() -> BenchResult {
        var operation = OperationResult()
        for _ in 0..<1000 { _ = operation.histogram.record(20_000) }
        return BenchResult(
            options: BenchOptions(),
            measuredSeconds: 10,
            operations: ["biometric_sign_in": operation],
            rawVerifyPerSecond: 17_000,
            peakResidentBytes: nil,
            enrollmentSeconds: 1,
            cores: 2,
            serverCPUSeconds: nil,
            benchCPUSeconds: 9,
            databaseThreadCPUSeconds: nil
        )
    }

    @Test("on PostgreSQL the report gives commits, rollbacks and statements per operation, and the statements the servers sent")
    func postgresLine() {
        var result = Self.thousandSignIns()
        result.postgres = PostgresUse(
            activity: PostgresActivity(commits: 4_000, rollbacks: 10, statements: 8_100),
            cpuSeconds: 0.9,
            statementsSent: 10_000
        )
        #expect(
            BenchReport(result: result).postgresLine
                == "PostgreSQL in the measured phase: 4.00 commits and 0.01 rollbacks per operation, 8.1 statements per operation, 10.0 sent per operation (round trips: BEGIN and COMMIT included); postgres processes 0.09 cores, 0.90 ms per operation"
        )
        // A server that does not count what it sends (an older binary), and a database without pg_stat_statements.
        result.postgres?.statementsSent = nil
        result.postgres?.activity.statements = nil
        #expect(
            BenchReport(result: result).postgresLine
                == "PostgreSQL in the measured phase: 4.00 commits and 0.01 rollbacks per operation, statements not counted (no pg_stat_statements in this database); postgres processes 0.09 cores, 0.90 ms per operation"
        )
    }

    @Test("the statements a server sent are read from its metrics' PostgreSQL series, and from no other")
    func statementsSentSeries() {
        let exposition = """
            # HELP bioauth_database_statements_total Statements sent to PostgreSQL, BEGIN and COMMIT included: one round trip each.
            # TYPE bioauth_database_statements_total counter
            bioauth_database_statements_total{engine="sqlite"} 7
            bioauth_database_statements_total{engine="postgres"} 123456
            bioauth_database_retries_total{engine="postgres"} 3

            """
        #expect(BenchRunner.postgresStatementsSent(inExposition: exposition) == 123_456)
        // A server from before the count (or not on PostgreSQL) has no such series: nothing is made up.
        #expect(BenchRunner.postgresStatementsSent(inExposition: "bioauth_database_retries_total{engine=\"postgres\"} 3\n") == nil)
        #expect(BenchRunner.postgresStatementsSent(inExposition: "bioauth_database_statements_total{engine=\"postgres\"} NaNx\n") == nil)
        // A value that is a number but no count (NaN, infinity) gives nothing either.
        #expect(BenchRunner.postgresStatementsSent(inExposition: "bioauth_database_statements_total{engine=\"postgres\"} NaN\n") == nil)
        #expect(BenchRunner.postgresStatementsSent(inExposition: "bioauth_database_statements_total{engine=\"postgres\"} +Inf\n") == nil)
    }

    @Test("the database thread's CPU time per operation is reported as the ceiling it puts on one server")
    func databaseThreadLine() {
        var result = Self.thousandSignIns()
        result.databaseThreadCPUSeconds = 2.5
        let report = BenchReport(result: result)
        #expect(
            report.databaseThreadLine
                == "database thread (runs every unit of work in turn): 0.25 cores, 2.500 ms per operation: a ceiling of about 400 operations/s however many cores"
        )
        #expect(report.text.contains("a ceiling of about 400 operations/s"))
        var external = result
        external.databaseThreadCPUSeconds = nil
        #expect(BenchReport(result: external).databaseThreadLine == nil)
    }

    @Test(
        "a thread's CPU time is read by its name; a name no thread has gives none",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/task"))
    )
    func threadCPUTime() throws {
        let spun = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            DatabaseThread.nameCurrentThread("bench-test-spin")  // as the database thread names itself
            // Busy until this thread has used 0.2 s of CPU by its own clock.
            var usage = timespec()
            repeat { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &usage) } while Double(usage.tv_sec) + Double(usage.tv_nsec) / 1e9 < 0.2
            spun.signal()
            done.wait()
        }
        thread.start()
        spun.wait()
        let seconds = ProcessStats.threadCPUSeconds(named: "bench-test-spin")
        done.signal()
        #expect((seconds ?? 0) >= 0.15, "\(String(describing: seconds))")
        #expect(ProcessStats.threadCPUSeconds(named: "no-such-thread") == nil)
    }

    @Test(
        "the server process answers, and is gone after stop; one that cannot start is reported with its own message",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func serverProcessLifecycle() async throws {
        try await ServerProcessFixture.run("bench-child") { executable, folder, http in
            let settings = ServerProcessFixture.settings(in: folder)
            let server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            #expect(ProcessStats.cpuSeconds(pid: server.pid) != nil && ProcessStats.residentBytes(pid: server.pid) != nil)
            await server.stop()
            #expect(kill(server.pid, 0) == -1, "the server process still exists")
            var bad = settings
            bad["BIOAUTH_BCRYPT_COST"] = "2"
            await #expect {
                _ = try await ServerProcess.start(executable: executable, settings: bad, folder: folder, http: http)
            } throws: { error in
                "\(error)".contains("exited with status") && "\(error)".contains("bcrypt")
            }
        }
    }
}
