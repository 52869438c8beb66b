import AsyncHTTPClient
import BioAuthClient
import Foundation
import Testing

@testable import bioauth

/// What a platform team sees of a real `bioauth serve` process: JSON log lines and a metrics listener.
@Suite("bioauth serve: logs and metrics")
struct ServeObservabilityTests {
    @Test("--log-format and --metrics-port are read from flags and the environment; a bad format names the setting")
    func options() throws {
        let environment = ["BIOAUTH_LOG_FORMAT": "JSON", "BIOAUTH_METRICS_PORT": "9464", "BIOAUTH_METRICS_HOST": "0.0.0.0"]
        let read = try ServeCommand.parse([]).serverConfiguration(environment: environment)
        #expect(read.logFormat == .json && read.metricsPort == 9464 && read.metricsHost == "0.0.0.0")
        let defaults = try ServeCommand.parse([]).serverConfiguration(environment: [:])
        #expect(defaults.logFormat == .text && defaults.metricsPort == nil && defaults.metricsHost == "127.0.0.1")
        #expect(throws: (any Error).self) { try ServeCommand.parse(["--log-format", "xml"]).serverConfiguration(environment: [:]) }
        do {
            _ = try ServeCommand.parse(["--log-format", "xml"]).serverConfiguration(environment: [:])
        } catch {
            #expect("\(error)" == "--log-format must be text or json, not xml")
        }
    }

    @Test(
        "a served process writes JSON log lines with the request id, and serves metrics on their own port only",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"))
    )
    func servedProcess() async throws {
        try await ServerProcessFixture.run("observability") { executable, folder, http in
            let metricsPort = try await ServerProcess.freeLoopbackPort()
            let settings = ServerProcessFixture.settings(
                in: folder,
                [
                    "BIOAUTH_BCRYPT_COST": "4", "BIOAUTH_LOG_LEVEL": "info", "BIOAUTH_LOG_FORMAT": "json",
                    "BIOAUTH_METRICS_PORT": String(metricsPort),
                ]
            )
            let server = try await ServerProcess.start(executable: executable, settings: settings, folder: folder, http: http)
            var request = HTTPClientRequest(url: server.url.appendingPathComponent("v1/accounts").absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "X-Request-Id", value: "support-ticket-42")
            request.body = .bytes(Data(#"{"username":"alice","password":"correct horse"}"#.utf8))
            let created = try await http.execute(request, timeout: .seconds(10))
            #expect(created.status.code == 201 && created.headers.first(name: "X-Request-Id") == "support-ticket-42")

            let metrics = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(metricsPort)/metrics"), timeout: .seconds(10))
            let text = String(buffer: try await metrics.body.collect(upTo: 1 << 20))
            #expect(text.contains(#"bioauth_http_requests_total{method="POST",route="/v1/accounts",status="201"} 1"#), "\(text.prefix(3000))")
            let onAPI = try await http.execute(
                HTTPClientRequest(url: server.url.appendingPathComponent("metrics").absoluteString),
                timeout: .seconds(10)
            )
            #expect(onAPI.status.code == 404)
            await server.stop()

            let lines = server.log.split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not one JSON object: \(line)")
            }
            let access = try #require(
                lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                    .first { $0["request_id"] as? String == "support-ticket-42" && $0["status"] != nil },
                "\(server.log)"
            )
            #expect(access["route"] as? String == "/v1/accounts" && access["status"] as? Int == 201 && access["duration_ms"] is Double, "\(access)")
            #expect(access["level"] as? String == "info" && access["time"] is String)
            #expect(!server.log.contains("hb.request.id"), "one request id a line, the documented request_id")
            #expect(!server.log.contains("correct horse"))
        }
    }
}
