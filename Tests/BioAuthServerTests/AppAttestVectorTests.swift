import BioAuthCore
import Foundation
import SQLKit
import Testing

@testable import BioAuthServer

/// Real App Attest output from devices (see Fixtures/appattest/README.md), and negative cases changed in one way.
@Suite("App Attest verification against real vectors")
struct AppAttestVectorTests {
    struct Case {
        let name: String
        let json: [String: Any]
        func data(_ key: String) -> Data { Data(base64Encoded: json[key] as! String)! }
        func string(_ key: String) -> String { json[key].map { "\($0)" } ?? "" }
        var expected: [String: Any] {
            if let dict = json["expected"] as? [String: Any] { return dict }
            // A few files store the expectation as Python-literal text.
            let text = (json["expected"] as! String).replacingOccurrences(of: "'", with: "\"")
            return try! JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        }
    }

    static func cases(_ folder: String) -> [String] {
        let url = Bundle.module.url(forResource: "Fixtures/appattest/\(folder)", withExtension: nil)!
        return try! FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func load(_ folder: String, _ file: String) -> Case {
        let url = Bundle.module.url(forResource: "Fixtures/appattest/\(folder)/\(file)", withExtension: nil)!
        return Case(name: file, json: try! JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any])
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]Z` without Foundation's formatters (days from the civil date, proleptic Gregorian).
    static func time(_ text: String) -> Date {
        let seconds = text.split(separator: ".").first.map(String.init) ?? text  // fractions dropped: whole seconds suffice
        let parts = seconds.split(whereSeparator: { "-T:Z".contains($0) }).map { Int($0)! }
        let (y, m, d) = (parts[1] <= 2 ? parts[0] - 1 : parts[0], parts[1], parts[2])
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146097 + dayOfEra - 719468
        return Date(timeIntervalSince1970: TimeInterval(days * 86400 + parts[3] * 3600 + parts[4] * 60 + parts[5]))
    }

    static func verifier(_ c: Case) -> AppAttestVerifier {
        AppAttestVerifier(allowedAppIDs: [c.string("app_id")], environments: [.development, .production])
    }

    static func verifyAttestation(_ c: Case, environments: Set<AppAttestEnvironment>? = nil) async throws(AppAttestError) -> AttestedAppKey {
        var verifier = Self.verifier(c)
        if let environments, let expected = AppAttestEnvironment(rawValue: c.string("environment")) {
            verifier = AppAttestVerifier(
                allowedAppIDs: [c.string("app_id")],
                environments: environments.contains(expected) ? environments : [expected]
            )
        }
        return try await verifier.verifyAttestation(
            c.data("attestation_b64"),
            keyID: c.data("key_id"),
            clientDataHash: c.data("client_data_hash_b64"),
            at: time(c.string("valid_at"))
        )
    }

    @Test("every App Attest code is a 403 problem and is documented in PROTOCOL.md")
    func codes() throws {
        let protocolText = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../docs/PROTOCOL.md"),
            encoding: .utf8
        )
        for code in AppAttestError.allCodes {
            #expect(APIError.status(of: ProblemCode(rawValue: code)) == .forbidden)
            #expect(protocolText.contains("`\(code)`"), "\(code) is not in PROTOCOL.md")
        }
    }

    @Test("the date parser agrees with known instants")
    func dates() {
        #expect(Self.time("1970-01-01T00:00:00Z").timeIntervalSince1970 == 0)
        #expect(Self.time("2021-04-18T09:55:20Z").timeIntervalSince1970 == 1_618_739_720)
        #expect(Self.time("2024-02-29T12:00:00Z").timeIntervalSince1970 == 1_709_208_000)
        #expect(Self.time("2024-02-29T12:00:00.755Z").timeIntervalSince1970 == 1_709_208_000)
    }

    @Test("the pinned root is Apple's App Attestation Root CA")
    func pinnedRoot() throws {
        let url = Bundle.module.url(forResource: "Fixtures/appattest/Apple_App_Attestation_Root_CA", withExtension: "pem")!
        let pem = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pem == AppleAppAttestRoot.pem)
    }

    @Test("every real attestation is accepted at its valid_at, with the key and environment it claims", arguments: cases("attestation"))
    func attestation(file: String) async throws {
        let c = Self.load("attestation", file)
        let key = try await Self.verifyAttestation(c)
        #expect(key.keyID == c.data("key_id"))
        #expect(key.environment.rawValue == c.string("environment"))
        #expect(key.appID == c.string("app_id"))
        if let hex = c.expected["public_key_x963_hex"] as? String {
            #expect(key.publicKey.x963Representation.map { String(format: "%02x", $0) }.joined() == hex)
        }
    }

    @Test("every real assertion verifies with its key and advances the counter", arguments: cases("assertion"))
    func assertion(file: String) throws {
        let c = Self.load("assertion", file)
        let key = try DevicePublicKey(x963Representation: Data(hex: c.string("public_key_x963_hex")))
        let counter = try Self.verifier(c).verifyAssertion(
            c.data("assertion_b64"),
            clientData: c.data("client_data_b64"),
            key: key,
            appID: c.string("app_id"),
            previousCounter: UInt32(c.string("previous_counter"))!
        )
        #expect(Int(counter) == c.expected["counter"] as? Int)
    }

    static let expectedCodes = [
        "expired": "app_attest_certificate_expired",
        "wrong-app-id": "app_attest_app_id_mismatch",
        "wrong-challenge": "app_attest_nonce_mismatch",
        "wrong-environment": "app_attest_environment_mismatch",
        "wrong-key-id": "app_attest_key_id_mismatch",
        "replayed-counter": "app_attest_counter_replayed",
        "wrong-client-data": "app_attest_invalid_signature",
    ]

    @Test("every negative case is refused with the code for its own defect", arguments: cases("negative"))
    func negative(file: String) async throws {
        let c = Self.load("negative", file)
        let defect = String(file.dropLast(5).split(separator: "--").last!)
        let expected = try #require(Self.expectedCodes[defect])
        do {
            if c.string("kind") == "attestation" {
                // The deployment expects the environment the case names (a wrong-environment case names the other one).
                let environment = AppAttestEnvironment(rawValue: c.string("environment"))!
                _ = try await AppAttestVerifier(allowedAppIDs: [c.string("app_id")], environments: [environment]).verifyAttestation(
                    c.data("attestation_b64"),
                    keyID: c.data("key_id"),
                    clientDataHash: c.data("client_data_hash_b64"),
                    at: Self.time(c.string("valid_at"))
                )
            } else {
                let key = try DevicePublicKey(x963Representation: Data(hex: c.string("public_key_x963_hex")))
                _ = try Self.verifier(c).verifyAssertion(
                    c.data("assertion_b64"),
                    clientData: c.data("client_data_b64"),
                    key: key,
                    appID: c.string("app_id"),
                    previousCounter: UInt32(c.string("previous_counter"))!
                )
            }
            Issue.record("\(file) was accepted")
        } catch let error as AppAttestError {
            #expect(error.code == expected, "\(file): \(error.reason)")
        }
    }

    @Test("a real attestation is refused now (its leaf expired) and for an app id not allowed")
    func deploymentChecks() async throws {
        let c = Self.load("attestation", "veehaitch-ios-14.2.json")
        await #expect(throws: AppAttestError.certificateExpired) {
            _ = try await Self.verifier(c).verifyAttestation(
                c.data("attestation_b64"),
                keyID: c.data("key_id"),
                clientDataHash: c.data("client_data_hash_b64"),
                at: Date()
            )
        }
        await #expect(throws: AppAttestError.appIDMismatch) {
            _ = try await AppAttestVerifier(allowedAppIDs: ["TEAM.other.app"], environments: [.development, .production]).verifyAttestation(
                c.data("attestation_b64"),
                keyID: c.data("key_id"),
                clientDataHash: c.data("client_data_hash_b64"),
                at: Self.time(c.string("valid_at"))
            )
        }
        // A test CA instead of Apple's root: the same real chain is untrusted.
        let untrusting = AppAttestVerifier(trustedRoots: [], allowedAppIDs: [c.string("app_id")], environments: [.development, .production])
        await #expect(throws: AppAttestError.untrustedChain) {
            _ = try await untrusting.verifyAttestation(
                c.data("attestation_b64"),
                keyID: c.data("key_id"),
                clientDataHash: c.data("client_data_hash_b64"),
                at: Self.time(c.string("valid_at"))
            )
        }
    }

    @Test(
        "a real device's attestation (about 7,500 characters of base64url) reaches the verifier through the API",
        arguments: cases("attestation")
    )
    func realAttestationOverTheAPI(file: String) async throws {
        let c = Self.load("attestation", file)
        let (attestation, appAttestKeyID) = (Base64URL.encode(c.data("attestation_b64")), Base64URL.encode(c.data("key_id")))
        try await TestServer.run(
            configure: {
                $0.appAttest.mode = .report
                $0.appAttest.allowedAppIDs = [c.string("app_id")]
                $0.appAttest.environments = [.development, .production]
            },
            { api in
                try await api.createAccount()
                let tokens = try await api.signIn()
                let key = TestKey()
                let challenge = try await api.call(.post, "/v1/devices/challenges", token: tokens.access)
                #expect(attestation.utf8.count > 6_900)
                let reply = try await api.call(
                    .post,
                    "/v1/devices",
                    json: [
                        "challengeId": try #require(challenge["challengeId"]), "publicKey": key.publicKey, "keyId": key.keyID,
                        "biometryKind": "faceID", "deviceName": "Alice's iPhone", "counter": 0,
                        "signature": try key.sign(.register, challenge: try #require(challenge["challenge"]), counter: 0),
                        "appAttest": ["keyId": appAttestKeyID, "attestation": attestation],
                    ],
                    token: tokens.access
                )
                // It was made over another payload, so the verifier refuses it; under report the device registers and
                // the refusal is audited with the verifier's own code (it used to be refused as too long to decode).
                #expect(reply.status == 201, "\(reply.raw)")
                let codes = try await api.database.transaction { db in
                    try await db.select().column("code").from("audit_events").where("code", .isNot, SQLLiteral.null).all()
                        .map { try $0.decode(column: "code", as: String.self) }
                }
                #expect(codes.count == 1 && codes.allSatisfy { $0.hasPrefix("app_attest_") && $0 != "app_attest_malformed" }, "\(codes)")
            }
        )
    }

    @Test("a damaged attestation of any shape is refused with a code, never a crash")
    func damaged() async throws {
        let c = Self.load("attestation", "warden-ios17.json")
        let object = c.data("attestation_b64")
        let verifier = Self.verifier(c)
        var variants: [Data] = [Data(), Data([0xA0]), Data([0xFF]), object.prefix(object.count / 2), Data(repeating: 0x81, count: 5000)]
        for index in stride(from: 0, to: object.count, by: max(1, object.count / 60)) {
            var flipped = object
            flipped[flipped.startIndex + index] ^= 0x5A
            variants.append(flipped)
        }
        let original = try await verifier.verifyAttestation(
            object,
            keyID: c.data("key_id"),
            clientDataHash: c.data("client_data_hash_b64"),
            at: Self.time(c.string("valid_at"))
        )
        // Bytes after the top-level item are ignored (neither signed nor used).
        #expect(
            try await verifier.verifyAttestation(
                object + Data([0x00]),
                keyID: c.data("key_id"),
                clientDataHash: c.data("client_data_hash_b64"),
                at: Self.time(c.string("valid_at"))
            ) == original
        )
        for variant in variants {
            do {
                let key = try await verifier.verifyAttestation(
                    variant,
                    keyID: c.data("key_id"),
                    clientDataHash: c.data("client_data_hash_b64"),
                    at: Self.time(c.string("valid_at"))
                )
                // Apple's receipt is kept for fraud-risk queries, not verified here: a flip inside it is the only
                // change that may pass, and then the stored receipt differs.
                #expect(key.receipt != original.receipt, "a damaged attestation was accepted")
            } catch {
                #expect(AppAttestError.allCodes.contains(error.code))
            }
        }
    }
}

extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}
