import BioAuthClient
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import OpenAPIRuntime
import Testing

@testable import bioauth

@Suite("bench HTTP connection")
struct BenchConnectionTests {
    @Test("the client library works over it: bodies, headers and problem responses arrive as over any transport")
    func clientLibrary() async throws {
        try await LoopbackTestServer.with { url in
            let connection = try BenchConnection(serverURL: url)
            let api = BioAuthAPI(serverURL: url, transport: connection)
            _ = try await api.createAccount(username: "bench-connection", password: "correct horse battery")
            let tokens = try await api.signIn(username: "bench-connection", password: "correct horse battery", installationID: "bench-connection")
            #expect(!tokens.accessToken.isEmpty)
            // The bearer token travels as a header; the device list of a new account is empty.
            #expect(try await api.devices(accessToken: tokens.accessToken).isEmpty)
            await #expect {
                try await api.signIn(username: "bench-connection", password: "wrong horse battery", installationID: "bench-connection")
            } throws: { APIProblem.code(of: $0) == "invalid_credentials" }
            await connection.close()
        }
    }

    @Test("a connection the server closes is opened again for the next request")
    func reopensAfterClose() async throws {
        try await LoopbackTestServer.with { url in
            let connection = try BenchConnection(serverURL: url)
            var closing = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/healthz")
            closing.headerFields[.connection] = "close"
            let (first, _) = try await connection.send(closing, body: nil, baseURL: url, operationID: "healthz")
            #expect(first.status == .ok)
            let (second, _) = try await connection.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/healthz"),
                body: nil,
                baseURL: url,
                operationID: "healthz"
            )
            #expect(second.status == .ok)
            await connection.close()
        }
    }

    @Test("no server listening: the request fails with an error instead of waiting")
    func refusedConnection() async throws {
        // A port that was free a moment ago: bind, read the port, close.
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let connection = try BenchConnection(serverURL: url)
        await #expect(throws: (any Error).self) {
            _ = try await connection.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/healthz"),
                body: nil,
                baseURL: url,
                operationID: "healthz"
            )
        }
    }

    @Test("a server that accepts the connection but never answers: the request fails after the timeout")
    func timeout() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(silent.localAddress?.port)
        let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let connection = try BenchConnection(serverURL: url, timeout: .milliseconds(200))
        await #expect(throws: BenchError.self) {
            _ = try await connection.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/healthz"),
                body: nil,
                baseURL: url,
                operationID: "healthz"
            )
        }
        await connection.close()
        try await silent.close()
    }

    @Test("only plain http to a host and port", arguments: ["https://127.0.0.1:8443", "ftp://127.0.0.1:21"])
    func schemes(url: String) throws {
        #expect(throws: BenchError.self) { try BenchConnection(serverURL: URL(string: url)!) }
    }
}
