import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import BioAuthServer

/// Request ids, W3C trace context and the JSON log format.
@Suite("Request ids, traces and logs")
struct RequestLogTests {
    @Test("a request id is made, or taken from X-Request-Id when it is safe, returned, and on the request's log lines")
    func requestIDs() async throws {
        let sink = LogSink()
        try await TestServer.run(logLevel: .info, logSink: sink) { api in
            let made = try await api.call(.get, "/healthz")
            let id = try #require(made.headers[.requestID])
            #expect(UUID(uuidString: id) != nil)

            let given = try await api.call(.get, "/healthz", headers: [.requestID: "lb-7f3a.2026:11"])
            #expect(given.headers[.requestID] == "lb-7f3a.2026:11")
            #expect(sink.text.contains(#""request_id": lb-7f3a.2026:11"#), "\(sink.text)")

            for unsafe in ["two words", String(repeating: "a", count: 129), "<script>", "id;x=1", "café"] {
                let replaced = try await api.call(.get, "/healthz", headers: [.requestID: unsafe])
                #expect(replaced.headers[.requestID].flatMap(UUID.init(uuidString:)) != nil, "\(unsafe) is replaced: \(replaced.headers)")
                #expect(!sink.text.contains(unsafe))
            }
            let problem = try await api.call(.post, "/v1/sessions", json: ["username": "nobody"], headers: [.requestID: "bad-one"])
            #expect(problem.status == 400 && problem.headers[.requestID] == "bad-one", "problems carry it too")
        }
    }

    @Test("a valid traceparent puts the trace id on the request's log lines; an invalid one is ignored")
    func traceparent() async throws {
        let sink = LogSink()
        try await TestServer.run(logLevel: .info, logSink: sink) { api in
            let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            _ = try await api.call(.get, "/healthz", headers: [.traceparent: trace, .requestID: "traced"])
            let line = try #require(sink.text.split(separator: "\n").first { $0.contains(#""request_id": traced"#) })
            #expect(line.contains(#""trace_id": 4bf92f3577b34da6a3ce929d0e0e4736"#))
            #expect(line.contains(#""parent_span_id": 00f067aa0ba902b7"#))
            _ = try await api.call(.get, "/healthz", headers: [.traceparent: "00-0000-zz-01", .requestID: "untraced"])
            let other = try #require(sink.text.split(separator: "\n").first { $0.contains(#""request_id": untraced"#) })
            #expect(!other.contains("trace_id"))
        }
    }

    @Test("a refusal's log line carries its problem code, from the operation and the router alike; a success's none")
    func problemCodeOnTheLine() async throws {
        let sink = LogSink()
        try await TestServer.run(logLevel: .info, logSink: sink) { api in
            func line(_ id: String) throws -> Substring {
                try #require(sink.text.split(separator: "\n").first { $0.contains(#""request_id": \#(id)"#) && $0.contains("\"status\"") })
            }
            let wrong = ["username": "nobody", "password": "wrong password", "installationId": "p"]
            #expect(try await api.call(.post, "/v1/sessions", json: wrong, headers: [.requestID: "wrong-pw"]).status == 401)
            let refused = try line("wrong-pw")
            #expect(refused.contains(#""problem": invalid_credentials"#) && refused.contains("401 invalid_credentials"), "\(refused)")
            _ = try await api.call(.get, "/v1/no-such-thing", headers: [.requestID: "nowhere"])
            #expect(try line("nowhere").contains(#""problem": not_found"#))
            _ = try await api.call(.delete, "/v1/sessions/biometric/challenges", headers: [.requestID: "wrong-method"])
            #expect(try line("wrong-method").contains(#""problem": method_not_allowed"#))
            _ = try await api.call(.get, "/healthz", headers: [.requestID: "fine"])
            #expect(!(try line("fine")).contains("problem"))
        }
    }

    @Test(
        "traceparent parsing follows W3C Trace Context",
        arguments: [
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true),
            ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false),
            ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false),
            ("", false),
        ]
    )
    func traceparentParsing(header: String, valid: Bool) {
        #expect((RequestTrace.parse(traceparent: header) != nil) == valid)
    }

    @Test("JSON logs: one object a line with time, level, message, request id, route, status and duration; text escaped")
    func jsonLines() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "bioauth") { label in
            JSONLogHandler(label: label, metadataProvider: .bioAuthRequest) { line in lines.withLockedValue { $0.append(line) } }
        }
        logger.logLevel = .info
        RequestScope.$current.withValue(RequestScope(trace: RequestTrace(requestIDHeader: "r-1", traceparent: nil))) {
            logger.info(
                "a \"quoted\"\nline\u{01}",
                metadata: ["route": "/v1/sessions", "status": .stringConvertible(201), "duration_ms": .stringConvertible(3.5)]
            )
        }
        let written = lines.withLockedValue { $0 }
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1, "one line: \(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "info")
        #expect(object["message"] as? String == "a \"quoted\"\nline\u{01}")
        #expect(object["request_id"] as? String == "r-1")
        #expect(object["route"] as? String == "/v1/sessions")
        #expect(object["status"] as? Int == 201)
        #expect(object["duration_ms"] as? Double == 3.5)
        let time = try #require(object["time"] as? String)
        #expect(time.count == 24 && time.hasSuffix("Z") && time.contains("."), "RFC 3339 with milliseconds: \(time)")
    }

    @Test("JSON lines: an error attached to the event is the error member, unless the metadata names one")
    func jsonLineError() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "the disk is full" } }
        let lines = NIOLockedValueBox<[String]>([])
        let handler = JSONLogHandler(label: "bioauth", metadataProvider: nil) { line in lines.withLockedValue { $0.append(line) } }
        handler.log(
            event: LogEvent(
                level: .error,
                message: "closing resources failed",
                error: Broken(),
                metadata: nil,
                source: nil,
                file: #fileID,
                function: #function,
                line: #line
            )
        )
        handler.log(
            event: LogEvent(
                level: .error,
                message: "x",
                error: Broken(),
                metadata: ["error": "named"],
                source: nil,
                file: #fileID,
                function: #function,
                line: #line
            )
        )
        let objects = try lines.withLockedValue { $0 }.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.map { $0["error"] as? String } == ["the disk is full", "named"])
    }
}
