import BioAuthCore
import Foundation
import HTTPTypes
import Testing

@testable import BioAuthServer

@Suite("Accept: decided before the operation runs")
struct AcceptHeaderTests {
    static let accepted = [
        "application/json", "application/json, application/problem+json", "*/*", "application/*", "APPLICATION/JSON; charset=utf-8",
        "text/html, application/json;q=0.1", "text/html;q=0.9, */*;q=0.1", "", " , application/json", "application/json;q=1.000",
        "application/json; q=0.5; ext=1", #"application/json;profile="a,b""#, "application/*;q=0, application/json",
    ]
    static let refused = [
        "text/html", "application/json;q=0", "application/json;q=0.000, */*", "*/*;q=0", "application/xml, text/*",
        "application/*;q=0.5, application/json;q=0",
    ]
    static let malformed = [
        ";", "json", "*/json", "application/json;q=2", "application/json;q=0.1234", "application/json;q", "; q=1", "application/json;=1",
    ]

    @Test("which headers accept JSON: the most specific range decides, q=0 excludes, parameters other than q do not narrow")
    func decisions() {
        for header in Self.accepted { #expect(AcceptHeader.accepts(header, .json) == .yes, "\(header)") }
        for header in Self.refused { #expect(AcceptHeader.accepts(header, .json) == .no, "\(header)") }
        for header in Self.malformed { #expect(AcceptHeader.accepts(header, .json) == .malformed, "\(header)") }
        let yaml = AcceptHeader.MediaType(type: "application", subtype: "yaml")
        #expect(AcceptHeader.accepts("application/json, application/problem+json", yaml) == .no)
        #expect(AcceptHeader.accepts("application/yaml", yaml) == .yes)
        #expect(AcceptHeader.accepts("application/*", yaml) == .yes)
    }

    @Test("weights are read in thousandths, as RFC 9110 writes them")
    func weights() {
        #expect(AcceptHeader.qualityValue("1") == 1000)
        #expect(AcceptHeader.qualityValue("1.") == 1000)
        #expect(AcceptHeader.qualityValue("0.5") == 500)
        #expect(AcceptHeader.qualityValue("0.125") == 125)
        #expect(AcceptHeader.qualityValue("0") == 0)
        for bad in ["", "2", "1.5", "0.1234", "0,5", ".5", "-0"] { #expect(AcceptHeader.qualityValue(Substring(bad)) == nil, "\(bad)") }
    }

    @Test("an accepted header lets the operation run and answer JSON", arguments: accepted)
    func acceptedByTheServer(_ header: String) async throws {
        try await TestServer.run { api in
            let reply = try await api.call(.get, "/healthz", headers: [.accept: header])
            #expect(reply.status == 200 && reply["status"] == "ok", "\(header): \(reply.raw)")
        }
    }

    @Test("a header that excludes JSON gets 406 not_acceptable", arguments: refused)
    func refusedByTheServer(_ header: String) async throws {
        try await TestServer.run { api in
            let reply = try await api.call(.get, "/healthz", headers: [.accept: header])
            #expect(reply.status == 406 && reply.code == "not_acceptable", "\(header): \(reply.raw)")
        }
    }

    @Test("the contract is YAML: Accept JSON only is refused, YAML is answered")
    func contract() async throws {
        try await TestServer.run { api in
            #expect(try await api.call(.get, "/openapi.yaml", headers: [.accept: "application/json"]).code == "not_acceptable")
            let yaml = try await api.call(.get, "/openapi.yaml", headers: [.accept: "application/yaml"])
            #expect(yaml.status == 200 && yaml.raw.hasPrefix("openapi:"))
        }
    }

    @Test("a change requested with a weighted Accept happens once and answers 201; a refused one changes nothing")
    func stateChanging() async throws {
        try await TestServer.run { api in
            let body = #"{"username":"dora","password":"correct horse"}"#
            let refused = try await api.call(.post, "/v1/accounts", body: body, headers: [.accept: "text/html"])
            #expect(refused.status == 406)
            let created = try await api.call(.post, "/v1/accounts", body: body, headers: [.accept: "text/html;q=0.9, application/json;q=0.5"])
            #expect(created.status == 201, "the account was not created by the refused request: \(created.raw)")
        }
    }

    @Test("a failure is a problem document whatever Accept says")
    func problemsAlwaysSent() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let reply = try await api.call(
                .post,
                "/v1/sessions",
                json: ["username": "alice", "password": "wrong horse", "installationId": "phone-1"],
                headers: [.accept: "application/json"]
            )
            #expect(reply.status == 401 && reply.code == "invalid_credentials")
        }
    }

    @Test("no content, no check: an operation that answers 204 ignores Accept, even one that excludes everything")
    func noContent() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let reply = try await api.call(.delete, "/v1/sessions/current", token: tokens.access, headers: [.accept: "application/problem+json"])
            #expect(reply.status == 204, "\(reply.raw)")
        }
    }
}
