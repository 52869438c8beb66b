import AsyncHTTPClient
import BioAuthServer
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// `bioauth serve` as a child process on loopback, for `bioauth bench --server-process`: the server's CPU time and
/// memory are then its own, apart from the load generator's.
final class ServerProcess: Sendable {
    let url: URL
    let pid: Int32
    private let process: Process
    private let logFile: URL

    private init(process: Process, url: URL, logFile: URL) {
        self.process = process
        self.url = url
        self.pid = process.processIdentifier
        self.logFile = logFile
    }

    /// Starts `executable serve` on a free loopback port with `settings` (`BIOAUTH_*` variables; none is inherited
    /// from this process) and returns once the server answers `/readyz`. Its output goes to `folder/logName`.
    static func start(
        executable: URL,
        settings: [String: String],
        folder: URL,
        http: HTTPClient,
        logName: String = "server.log"
    ) async throws -> ServerProcess {
        let port = try await freeLoopbackPort()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("BIOAUTH_") }
        environment.merge(settings) { _, setting in setting }
        environment["BIOAUTH_HOST"] = "127.0.0.1"
        environment["BIOAUTH_PORT"] = String(port)
        let logFile = folder.appendingPathComponent(logName)
        guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
            throw BenchError("cannot create \(logFile.path)")
        }
        let output = try FileHandle(forWritingTo: logFile)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve"]
        process.environment = environment
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? output.close()
        let server = ServerProcess(process: process, url: URL(string: "http://127.0.0.1:\(port)")!, logFile: logFile)
        do {
            try await server.waitUntilAnswering(http: http)
            return server
        } catch {
            await server.stop()  // never left running behind an error, a cancellation included
            throw error
        }
    }

    /// Returns once `/readyz` answers 200; throws when the process exits first or 60 s pass.
    private func waitUntilAnswering(http: HTTPClient) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        let health = url.appendingPathComponent("readyz").absoluteString
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw BenchError("the server process exited with status \(process.terminationStatus) before it answered: \(logTail())")
            }
            if let response = try? await http.execute(HTTPClientRequest(url: health), timeout: .seconds(2)), response.status == .ok {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("the server process did not answer /readyz within 60 s: \(logTail())")
    }

    /// Asks the server to stop (SIGTERM, a graceful shutdown), and kills it if it is still running after 10 s.
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(pid, SIGKILL) }
    }

    /// Waits up to `seconds` for the process to end; its exit status, or `nil` if it is still running or a signal ended it.
    func exitStatus(within seconds: Double) async -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning, process.terminationReason == .exit else { return nil }
        return process.terminationStatus
    }

    /// The server's output so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The end of the server's output, for an error message.
    private func logTail() -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: "\n")
    }

    /// A port nothing listens on now, tried by binding it on loopback and released, from
    /// ``LoopbackPorts/childProcesses``. The child binds it a moment later: a port from the kernel's own range could
    /// meanwhile go to another test's server, and `/readyz` would then be answered by that server.
    static func freeLoopbackPort() async throws -> Int {
        try await LoopbackPorts.bindFree(in: LoopbackPorts.childProcesses) { port in
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: port).get()
            try await channel.close()
            return port
        }
    }
}
