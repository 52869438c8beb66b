import BioAuthCore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Attacks on how a request is framed, found by an outside attack run: each must be refused as the client's
/// fault (400 with a problem document, or a closed connection), never a 5xx, and change nothing.
@Suite("Request framing: duplicate members and broken HTTP")
struct RequestFramingTests {
    // MARK: Duplicate member names (first-wins in Foundation, last-wins in most other parsers)

    @Test("a payment with amountMinor twice is refused, and no payment is created")
    func duplicateAmount() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let before = try await api.snapshot()
            let body = #"{"amountMinor":100,"currency":"CNY","payeeId":"shop-1","payeeName":"Shop","amountMinor":999}"#
            let reply = try await api.call(
                .post,
                "/v1/payments",
                body: body,
                token: tokens.access,
                headers: [HTTPField.Name("Idempotency-Key")!: "k-1"]
            )
            #expect(reply.status == 400)
            #expect(reply.code == "malformed_request")
            #expect(try await api.snapshot() == before)
        }
    }

    @Test(
        "duplicates are refused at every endpoint, however they are spelled",
        arguments: [
            ("/v1/accounts", #"{"username":"carol","password":"correct horse","username":"mallory"}"#),
            ("/v1/accounts", #"{"username":"carol","password":"correct horse","\u0075sername":"mallory"}"#),
            ("/v1/sessions", #"{"username":"alice","password":"correct horse","installationId":"a","installationId":"b"}"#),
            ("/v1/sessions/biometric/challenges", #"{"keyId":"AAAA","keyId":"BBBB"}"#),
            ("/v1/sessions/refresh", #"{"refreshToken":"x","refreshToken":"y"}"#),
        ]
    )
    func duplicatesEverywhere(path: String, body: String) async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let before = try await api.snapshot()
            let reply = try await api.call(.post, path, body: body)
            #expect(reply.status == 400, "\(path): \(reply.raw)")
            #expect(reply.code == "malformed_request")
            #expect(try await api.snapshot() == before)
        }
    }

    @Test(
        "JSON only a lenient parser reads (a trailing comma) is refused, so no duplicate can hide behind it (found by fuzzing)",
        arguments: [
            #"{"amountMinor":100,"currency":"CNY","payeeId":"s","payeeName":"Shop","memo":"x","amountMinor":999,}"#,
            #"{"amountMinor":100,"currency":"CNY","payeeId":"s","payeeName":"Shop","amountMinor":999 , }"#,
            #"{"amountMinor":100,"currency":"CNY","payeeId":"s","payeeName":"Shop",}"#,
        ]
    )
    func lenientJSON(_ body: String) async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let before = try await api.snapshot()
            let reply = try await api.call(
                .post,
                "/v1/payments",
                body: body,
                token: tokens.access,
                headers: [HTTPField.Name("Idempotency-Key")!: "k-l"]
            )
            #expect(reply.code == "malformed_request", "\(reply.raw)")
            #expect(try await api.snapshot() == before)
        }
    }

    @Test("a payee name given twice is refused, not stored as the first")
    func duplicatePayeeName() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            try await api.registerPayeeIfValid("shop-1", name: "Shop")
            let body = #"{"amountMinor":100,"currency":"CNY","payeeId":"shop-1","payeeName":"Shop","payeeName":"Evil Corp"}"#
            let reply = try await api.call(
                .post,
                "/v1/payments",
                body: body,
                token: tokens.access,
                headers: [HTTPField.Name("Idempotency-Key")!: "k-2"]
            )
            #expect(reply.code == "malformed_request")
            // The same body without the second name is fine: the check is about the duplicate, not the fields.
            let single = #"{"amountMinor":100,"currency":"CNY","payeeId":"shop-1","payeeName":"Shop"}"#
            let created = try await api.call(
                .post,
                "/v1/payments",
                body: single,
                token: tokens.access,
                headers: [HTTPField.Name("Idempotency-Key")!: "k-3"]
            )
            #expect(created.status == 201, "\(created.raw)")
        }
    }

    // MARK: Broken HTTP framing, over a real socket

    struct Framing: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: String
        var testDescription: String { name }
    }

    static let framingCases: [Framing] = [
        Framing(name: "garbage request line", bytes: "HELLO THERE\r\n\r\n"),
        Framing(name: "control character in a header", bytes: "GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: a\u{01}b\r\n\r\n"),
        Framing(
            name: "two different Content-Lengths",
            bytes: "POST /v1/accounts HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x"
        ),
        Framing(
            name: "Content-Length with Transfer-Encoding",
            bytes: "POST /v1/accounts HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        ),
        Framing(
            name: "bad chunk size",
            bytes:
                "POST /v1/accounts HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n"
        ),
    ]

    @Test("framing errors get 400 with a malformed_request problem document and log no error", arguments: framingCases)
    func framing(_ framing: Framing) async throws {
        let sink = LogSink()
        try await TestServer.run(.live, logLevel: .trace, logSink: sink) { api in
            try await api.createAccount()
            let before = try await api.snapshot()
            let port = try #require(api.client.port)
            let bytes = Array(framing.bytes.utf8)
            let received = try await RawHTTPConnection.offPool { try RawHTTPConnection.exchange(port: port, bytes) }
            let response = try #require(RawHTTPConnection.parse(received), "\(framing.name): \(String(decoding: received, as: UTF8.self))")
            #expect(response.status == 400, "\(framing.name)")
            #expect(response.headers.contains("content-type: application/problem+json"), "\(framing.name): \(response.headers)")
            let problem = try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]
            #expect(problem?["code"] as? String == "malformed_request", "\(framing.name): \(response.body)")
            #expect(try await api.snapshot() == before)
            #expect(try await api.call(.get, "/healthz").status == 200)
        }
        #expect(!sink.text.split(separator: "\n").contains { $0.hasPrefix("error") }, "\(framing.name) logged an error: \(sink.text)")
        #expect(!sink.text.contains("internal_error") && !sink.text.contains(" 500 "), "\(framing.name): \(sink.text)")
    }

    @Test("a body shorter than its Content-Length, then the client closing, is not a server fault")
    func truncatedBody() async throws {
        let sink = LogSink()
        try await TestServer.run(.live, logLevel: .trace, logSink: sink) { api in
            let before = try await api.snapshot()
            let port = try #require(api.client.port)
            let bytes = Array(
                "POST /v1/accounts HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"username\":\"ca".utf8
            )
            let received = try await RawHTTPConnection.offPool { try RawHTTPConnection.exchange(port: port, bytes, closeAfterSending: true) }
            // The client left, so there may be nobody to answer; if an answer got out, it is the client's fault.
            if let response = RawHTTPConnection.parse(received) {
                #expect(response.status == 400, "\(response.headers)")
            }
            #expect(try await api.snapshot() == before)
            #expect(try await api.call(.get, "/healthz").status == 200)
        }
        #expect(!sink.text.split(separator: "\n").contains { $0.hasPrefix("error") }, "logged an error: \(sink.text)")
        #expect(!sink.text.contains(" 500 "), "\(sink.text)")
    }
}
