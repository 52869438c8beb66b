import BioAuthCore
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Malformed input: 4xx with a code, nothing changed")
struct MalformedInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let method: HTTPRequest.Method
        let path: String
        let body: String?
        let contentType: String
        let code: String
        let authenticated: Bool
        let accept: String?
        let idempotencyKey: String?

        init(
            _ name: String,
            _ path: String,
            _ body: String?,
            code: String,
            contentType: String = "application/json",
            authenticated: Bool = false,
            accept: String? = nil,
            idempotencyKey: String? = nil
        ) {
            self.init(
                name,
                .post,
                path,
                body,
                code: code,
                contentType: contentType,
                authenticated: authenticated,
                accept: accept,
                idempotencyKey: idempotencyKey
            )
        }

        init(
            _ name: String,
            _ method: HTTPRequest.Method,
            _ path: String,
            _ body: String?,
            code: String,
            contentType: String = "application/json",
            authenticated: Bool = false,
            accept: String? = nil,
            idempotencyKey: String? = nil
        ) {
            self.idempotencyKey = idempotencyKey
            self.name = name
            self.method = method
            self.path = path
            self.body = body
            self.contentType = contentType
            self.code = code
            self.authenticated = authenticated
            self.accept = accept
        }

        var testDescription: String { name }
    }

    static let key = P256.Signing.PrivateKey().publicKey.x963Representation
    static let keyB64 = Base64URL.encode(key)
    static let keyID = Base64URL.encode(Data(SHA256.hash(data: key)))

    /// A registration body with one field replaced; `CHALLENGE` is filled in with a live challenge id.
    static func device(_ field: String, _ value: String) -> String {
        var fields = [
            "challengeId": "\"CHALLENGE\"", "publicKey": "\"\(keyB64)\"", "keyId": "\"\(keyID)\"", "biometryKind": "\"faceID\"",
            "deviceName": "\"Phone\"", "counter": "0", "signature": "\"MEUCIQ\"",
        ]
        fields[field] = value
        return "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    static let cases: [Case] = [
        Case("not JSON", "/v1/accounts", "{not json", code: "malformed_request"),
        Case("JSON of the wrong shape", "/v1/accounts", "[1,2]", code: "malformed_request"),
        Case("empty body", "/v1/accounts", "", code: "malformed_request"),
        Case("wrong type", "/v1/accounts", #"{"username":1,"password":"correct horse"}"#, code: "malformed_request"),
        Case("missing field", "/v1/accounts", #"{"username":"carol"}"#, code: "malformed_request"),
        Case("unknown field", "/v1/accounts", #"{"username":"carol","password":"correct horse","admin":true}"#, code: "malformed_request"),
        Case(
            "wrong content type",
            "/v1/accounts",
            #"{"username":"carol","password":"correct horse"}"#,
            code: "malformed_request",
            contentType: "text/plain"
        ),
        Case("username too short", "/v1/accounts", #"{"username":"c","password":"correct horse"}"#, code: "invalid_username"),
        Case("username with a space", "/v1/accounts", #"{"username":"ca rol","password":"correct horse"}"#, code: "invalid_username"),
        Case("password too short", "/v1/accounts", #"{"username":"carol","password":"short"}"#, code: "invalid_password"),
        Case(
            "password of 4 characters in 12 bytes (characters count, not bytes)",
            "/v1/accounts",
            #"{"username":"carol","password":"密码密码"}"#,
            code: "invalid_password"
        ),
        Case(
            "password over 72 bytes",
            "/v1/accounts",
            #"{"username":"carol","password":"\#(String(repeating: "密", count: 25))"}"#,
            code: "invalid_password"
        ),
        Case(
            "installation id with a slash",
            "/v1/sessions",
            #"{"username":"alice","password":"correct horse","installationId":"a/b"}"#,
            code: "invalid_installation_id"
        ),
        Case("refresh without token", "/v1/sessions/refresh", "{}", code: "malformed_request"),
        Case("key id not base64url", "/v1/sessions/biometric/challenges", #"{"keyId":"%%%"}"#, code: "invalid_encoding"),
        Case("key id padded", "/v1/sessions/biometric/challenges", #"{"keyId":"\#(keyID)="}"#, code: "invalid_encoding"),
        Case("key id 31 bytes", "/v1/sessions/biometric/challenges", #"{"keyId":"\#(Base64URL.encode(Data(count: 31)))"}"#, code: "invalid_encoding"),
        Case(
            "sign-in: negative counter",
            "/v1/sessions/biometric",
            #"{"challengeId":"x","keyId":"\#(keyID)","counter":-1,"signature":"AA"}"#,
            code: "malformed_request"
        ),
        Case(
            "sign-in: counter as text",
            "/v1/sessions/biometric",
            #"{"challengeId":"x","keyId":"\#(keyID)","counter":"1","signature":"AA"}"#,
            code: "malformed_request"
        ),
        Case(
            "sign-in: App Attest assertion not base64url (checked even with App Attest off)",
            "/v1/sessions/biometric",
            #"{"challengeId":"x","keyId":"\#(keyID)","counter":1,"signature":"AA","appAttestAssertion":"o2N+"}"#,
            code: "invalid_encoding"
        ),
        Case(
            "sign-in: empty App Attest assertion",
            "/v1/sessions/biometric",
            #"{"challengeId":"x","keyId":"\#(keyID)","counter":1,"signature":"AA","appAttestAssertion":""}"#,
            code: "invalid_encoding"
        ),
        Case(
            "sign-in: signature not base64url",
            "/v1/sessions/biometric",
            #"{"challengeId":"x","keyId":"\#(keyID)","counter":1,"signature":"+/=="}"#,
            code: "invalid_encoding"
        ),
        Case(
            "device: public key not base64url",
            "/v1/devices",
            device("publicKey", "\"not base64!\""),
            code: "invalid_encoding",
            authenticated: true
        ),
        Case(
            "device: public key 64 bytes",
            "/v1/devices",
            device("publicKey", "\"\(Base64URL.encode(key.prefix(64)))\""),
            code: "invalid_public_key",
            authenticated: true
        ),
        Case(
            "device: compressed public key",
            "/v1/devices",
            device("publicKey", "\"\(Base64URL.encode(Data([0x02]) + key[1...32]))\""),
            code: "invalid_public_key",
            authenticated: true
        ),
        Case(
            "device: point off the curve",
            "/v1/devices",
            device("publicKey", "\"\(Base64URL.encode(key.prefix(64) + Data([key[64] ^ 1])))\""),
            code: "invalid_public_key",
            authenticated: true
        ),
        Case(
            "device: key id of another key",
            "/v1/devices",
            device("keyId", "\"\(Base64URL.encode(Data(count: 32)))\""),
            code: "key_id_mismatch",
            authenticated: true
        ),
        Case(
            "device: App Attest key id of 31 bytes",
            "/v1/devices",
            device("appAttest", "{\"keyId\":\"\(Base64URL.encode(Data(count: 31)))\",\"attestation\":\"o2NmbXQ\"}"),
            code: "invalid_encoding",
            authenticated: true
        ),
        Case(
            "device: App Attest attestation not base64url",
            "/v1/devices",
            device("appAttest", "{\"keyId\":\"\(keyID)\",\"attestation\":\"++\"}"),
            code: "invalid_encoding",
            authenticated: true
        ),
        Case(
            "device: App Attest without its attestation",
            "/v1/devices",
            device("appAttest", "{\"keyId\":\"\(keyID)\"}"),
            code: "malformed_request",
            authenticated: true
        ),
        Case(
            "device: key id 33 bytes",
            "/v1/devices",
            device("keyId", "\"\(Base64URL.encode(Data(count: 33)))\""),
            code: "invalid_encoding",
            authenticated: true
        ),
        Case("device: unknown biometry", "/v1/devices", device("biometryKind", "\"retina\""), code: "malformed_request", authenticated: true),
        Case("device: empty name", "/v1/devices", device("deviceName", "\"\""), code: "invalid_device_name", authenticated: true),
        Case(
            "device: control character in name",
            "/v1/devices",
            device("deviceName", #""Phone\u0000""#),
            code: "invalid_device_name",
            authenticated: true
        ),
        Case(
            "device: bidi override in name",
            "/v1/devices",
            device("deviceName", #""Phone\u202E""#),
            code: "invalid_device_name",
            authenticated: true
        ),
        Case(
            "device: name too long",
            "/v1/devices",
            device("deviceName", "\"\(String(repeating: "x", count: 65))\""),
            code: "invalid_device_name",
            authenticated: true
        ),
        Case("device: negative counter", "/v1/devices", device("counter", "-5"), code: "malformed_request", authenticated: true),
        Case("device: counter over Int64", "/v1/devices", device("counter", "99999999999999999999"), code: "malformed_request", authenticated: true),
        Case("device: signature not base64url", "/v1/devices", device("signature", "\"@@\""), code: "invalid_encoding", authenticated: true),
        Case(
            "device: unknown challenge id",
            "/v1/devices",
            device("challengeId", "\"not-a-challenge\""),
            code: "challenge_not_found",
            authenticated: true
        ),
        Case("device: unknown field", "/v1/devices", device("extra", "1"), code: "malformed_request", authenticated: true),
        Case(
            "body over the limit",
            "/v1/accounts",
            #"{"username":"carol","password":"\#(String(repeating: "a", count: 70_000))"}"#,
            code: "body_too_large"
        ),
        Case("audit limit not a number", .get, "/v1/audit?limit=abc", nil, code: "malformed_request", authenticated: true),
        Case("audit limit out of range", .get, "/v1/audit?limit=500", nil, code: "malformed_request", authenticated: true),
        // A valid request whose Accept excludes JSON: refused before it runs (it used to run, commit, then answer 500).
        Case(
            "Accept: text/html on account creation",
            "/v1/accounts",
            #"{"username":"carol","password":"correct horse"}"#,
            code: "not_acceptable",
            accept: "text/html"
        ),
        Case(
            "Accept: JSON at q=0 on a registration challenge",
            "/v1/devices/challenges",
            nil,
            code: "not_acceptable",
            authenticated: true,
            accept: "application/json;q=0, */*"
        ),
        Case(
            "Accept: not a media range",
            "/v1/accounts",
            #"{"username":"carol","password":"correct horse"}"#,
            code: "malformed_request",
            accept: "json"
        ),
        Case(
            "Accept: a weight over 1",
            "/v1/accounts",
            #"{"username":"carol","password":"correct horse"}"#,
            code: "malformed_request",
            accept: "application/json;q=2"
        ),
        Case(
            "amount over 2^53 - 1",
            "/v1/payments",
            #"{"amountMinor":9007199254740992,"currency":"CNY","payeeId":"p-1","payeeName":"Shop"}"#,
            code: "invalid_amount",
            authenticated: true,
            idempotencyKey: "big-1"
        ),
        Case("unknown endpoint", .get, "/v1/nothing", nil, code: "not_found"),
        Case("unknown method", .patch, "/v1/accounts", "{}", code: "method_not_allowed"),
    ]

    @Test(
        "a path that exists with other methods gets 405 and an Allow header naming them; a path that does not, 404",
        arguments: [
            (HTTPRequest.Method.trace, "/v1/me", ["GET"]), (.get, "/v1/accounts", ["POST"]), (.delete, "/v1/payments", ["GET", "POST"]),
            (.put, "/v1/payments/00000000-0000-0000-0000-000000000000", ["GET"]), (.get, "/v1/devices/some-device", ["DELETE"]),
            (.options, "/healthz", ["GET"]), (.head, "/v1/sessions/current", ["DELETE"]),
            (.get, "/v1/payments/x/refund", []), (.post, "/v1/device", []), (.trace, "/v1/nothing", []),
        ]
    )
    func methodNotAllowed(method: HTTPRequest.Method, path: String, allowed: [String]) async throws {
        try await TestServer.run { api in
            let reply = try await api.call(method, path)
            if allowed.isEmpty {
                #expect(reply.status == 404 && reply.code == "not_found", "\(reply.raw)")
                #expect(reply.headers[.allow] == nil)
            } else {
                #expect(method == .head || reply.code == "method_not_allowed", "\(reply.raw)")
                #expect(reply.status == 405)
                let listed = reply.headers[.allow]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(listed.map(Set.init) == Set(allowed))
            }
        }
    }

    @Test("each malformed request is refused with its code and leaves every row as it was", arguments: cases)
    func refused(_ testCase: Case) async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let challenge = try await api.call(.post, "/v1/devices/challenges", token: tokens.access)
            let before = try await api.snapshot()
            var headers: HTTPFields = [.contentType: testCase.contentType]
            if testCase.authenticated { headers[.authorization] = "Bearer \(tokens.access)" }
            if let accept = testCase.accept { headers[.accept] = accept }
            if let key = testCase.idempotencyKey { headers[HTTPField.Name("Idempotency-Key")!] = key }
            let body = testCase.body?.replacingOccurrences(of: "CHALLENGE", with: challenge["challengeId"] ?? "")
            let reply = try await api.call(testCase.method, testCase.path, body: body, headers: headers)
            #expect((400..<500).contains(reply.status), "\(testCase.name): \(reply.status) \(reply.raw)")
            #expect(reply.code == testCase.code, "\(testCase.name): \(reply.raw)")
            #expect(try await api.snapshot() == before, "\(testCase.name) changed the database")
            // The server still works afterwards.
            #expect(try await api.call(.get, "/v1/me", token: tokens.access).status == 200)
        }
    }

    @Test("problem documents disclose no internals")
    func noInternals() async throws {
        try await TestServer.run { api in
            let reply = try await api.call(.post, "/v1/accounts", body: #"{"username": "carol", "password": 12}"#)
            #expect(reply["type"] == "urn:bioauth:problem:malformed_request")
            #expect(reply["title"] == "Bad Request")
            #expect(reply.json["status"] as? Int == 400)
            for leak in ["Swift", "DecodingError", "OpenAPIRuntime", "SQL", ".swift", "password\": 12"] {
                #expect(!reply.raw.contains(leak), "problem mentions \(leak): \(reply.raw)")
            }
        }
    }
}
