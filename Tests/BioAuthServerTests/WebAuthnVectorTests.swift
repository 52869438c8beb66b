import BioAuthCore
import Foundation
import HTTPTypes
import Testing
import X509

@testable import BioAuthServer

/// Every WebAuthn vector in Fixtures/webauthn (real registrations, assertions and attestation statements recorded
/// by py_webauthn, SimpleWebAuthn and python-fido2) gives its expected result, and each refusal has the code that
/// names the failed check.
@Suite("WebAuthn verification against real vectors")
struct WebAuthnVectorTests {
    static func files(_ folder: String) -> [String] {
        let url = Bundle.module.url(forResource: "Fixtures/webauthn/\(folder)", withExtension: nil)!
        return try! FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func load(_ folder: String, _ file: String) -> [String: Any] {
        let url = Bundle.module.url(forResource: "Fixtures/webauthn/\(folder)/\(file)", withExtension: nil)!
        return try! JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }

    /// base64url with or without padding, as the recorded browser JSON has it.
    static func bytes(_ value: Any?) -> Data {
        var text = (value as? String ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text) ?? Data()
    }

    /// The problem code each recorded error message corresponds to.
    static func expectedCode(_ message: String) -> ProblemCode {
        let table: [(String, ProblemCode)] = [
            ("malformed attestation type", .passkeyMalformed), ("Unsupported attestation type", .passkeyAttestationFormat),
            ("UnsupportedType", .passkeyAttestationFormat), ("was malformed", .passkeyMalformed),
            ("Certificate chain could not be validated", .passkeyAttestationUntrusted), ("token_binding", .passkeyTokenBinding),
            ("Could not verify authentication signature", .passkeyInvalidSignature),
            ("User verification is required", .passkeyUserNotVerified), ("sign count", .passkeyCounterReplayed),
            ("InvalidSignature", .passkeyAttestationInvalid), ("requires empty statement", .passkeyAttestationInvalid),
        ]
        return table.first { message.contains($0.0) }!.1
    }

    static func relyingParty(_ inputs: [String: Any]) throws -> WebAuthnRelyingParty {
        let origins = (inputs["expected_origin"] as? [String]) ?? [inputs["expected_origin"] as! String]
        let algorithms = try (inputs["supported_pub_key_algs"] as? [Int]).map {
            try $0.map { try #require(COSEAlgorithm(rawValue: $0), "algorithm \($0)") }
        }
        var policy = PasskeyAttestationPolicy.acceptAny
        if let roots = inputs["pem_root_certs_bytes_by_fmt"] as? [String: [String]] {
            policy = .requireTrusted(
                try roots.mapValues { pems in try pems.map { try Certificate(pemEncoded: String(decoding: bytes($0), as: UTF8.self)) } }
            )
        }
        return WebAuthnRelyingParty(
            rpID: inputs["expected_rp_id"] as! String,
            origins: origins,
            algorithms: algorithms ?? COSEAlgorithm.credentialDefaults,
            attestationPolicy: policy,
            requireUserVerification: inputs["require_user_verification"] as? Bool ?? false,
            requireUserPresence: inputs["require_user_presence"] as? Bool ?? true
        )
    }

    @Test("registrations", arguments: files("registration"))
    func registration(_ file: String) async throws {
        let vector = Self.load("registration", file)
        let inputs = vector["inputs"] as! [String: Any]
        let expected = vector["expected"] as! [String: Any]
        let response = (vector["credential"] as! [String: Any])["response"] as! [String: Any]
        let time = (vector["valid_at"] as? String).map { AppAttestVectorTests.time($0 + "Z") } ?? Date()
        var attestationObject = Self.bytes(response["attestationObject"])
        if file.contains("optional-user-presence") {
            // py_webauthn's test clears UP and UV in the parsed flags; a none attestation signs nothing, so
            // clearing them in the bytes reproduces it.
            attestationObject = Self.clearingPresenceAndVerification(attestationObject)
        }
        let verify = { [attestationObject] in
            try await Self.relyingParty(inputs).verifyRegistration(
                clientDataJSON: Self.bytes(response["clientDataJSON"]),
                attestationObject: attestationObject,
                challenge: Self.bytes(inputs["expected_challenge_b64url"]),
                at: time
            )
        }
        if expected["result"] as? String == "valid" {
            let registration = try await verify()
            #expect(Base64URL.encode(registration.credentialID) == expected["credential_id"] as? String)
            #expect(registration.publicKey == Self.bytes(expected["credential_public_key"]))
            #expect(Int(registration.signCount) == expected["sign_count"] as? Int)
            #expect(registration.aaguid.uuidString.lowercased() == expected["aaguid"] as? String)
            #expect(registration.attestation.format == expected["fmt"] as? String)
            if let userVerified = expected["user_verified"] as? Bool { #expect(registration.userVerified == userVerified) }
            if let deviceType = expected["credential_device_type"] as? String {
                #expect(registration.backupEligible == (deviceType == "multi_device"))
            }
            if let backedUp = expected["credential_backed_up"] as? Bool { #expect(registration.backedUp == backedUp) }
            if vector["packed_self_attestation"] as? Bool == true { #expect(registration.attestation.type == .self) }
        } else {
            let error = await #expect(throws: WebAuthnError.self) { try await verify() }
            #expect(error?.problem == Self.expectedCode(expected["error"] as! String), "\(error.map(String.init(describing:)) ?? "")")
        }
    }

    /// The attestation object with the UP (0x01) and UV (0x04) flags of its authenticator data cleared.
    static func clearingPresenceAndVerification(_ object: Data) -> Data {
        guard case .map(let pairs) = try! CBORDecoder().decode(object) else { return object }
        return CBOREncoder.encode(
            .map(
                pairs.map { pair in
                    guard pair.key == .text("authData"), var authData = pair.value.bytesValue else { return pair }
                    authData[authData.startIndex + 32] &= ~0x05
                    return CBOR.Pair(pair.key, .bytes(authData))
                }
            )
        )
    }

    @Test("assertions", arguments: files("authentication"))
    func authentication(_ file: String) throws {
        let vector = Self.load("authentication", file)
        let inputs = vector["inputs"] as! [String: Any]
        let expected = vector["expected"] as! [String: Any]
        let response = (vector["credential"] as! [String: Any])["response"] as! [String: Any]
        let authenticatorData = Self.bytes(response["authenticatorData"])
        // The vectors do not record backup eligibility; the stored value is the one the assertion reports.
        let backupEligible = authenticatorData.count > 32 && authenticatorData[authenticatorData.startIndex + 32] & 0x08 != 0
        let stored = StoredPasskeyCredential(
            publicKey: Self.bytes(inputs["credential_public_key_b64url"]),
            signCount: UInt32(inputs["credential_current_sign_count"] as! Int),
            backupEligible: backupEligible
        )
        let verify = {
            try Self.relyingParty(inputs).verifyAuthentication(
                clientDataJSON: Self.bytes(response["clientDataJSON"]),
                authenticatorData: authenticatorData,
                signature: Self.bytes(response["signature"]),
                challenge: Self.bytes(inputs["expected_challenge_b64url"]),
                stored: stored
            )
        }
        if expected["result"] as? String == "valid" {
            let assertion = try verify()
            #expect(Int(assertion.signCount) == expected["new_sign_count"] as? Int)
            if let userVerified = expected["user_verified"] as? Bool { #expect(assertion.userVerified == userVerified) }
            if let backedUp = expected["credential_backed_up"] as? Bool { #expect(assertion.backedUp == backedUp) }
        } else {
            let error = #expect(throws: WebAuthnError.self) { try verify() }
            #expect(error?.problem == Self.expectedCode(expected["error"] as! String), "\(error.map(String.init(describing:)) ?? "")")
        }
    }

    /// A statement written as JSON ({"hex": …} for byte strings) as CBOR.
    static func cbor(_ value: Any) -> CBOR {
        switch value {
        case let dict as [String: Any] where dict.keys.sorted() == ["hex"]:
            return .bytes(Data(hex: dict["hex"] as! String))
        case let dict as [String: Any]:
            return .map(dict.keys.sorted().map { CBOR.Pair(.text($0), cbor(dict[$0]!)) })
        case let array as [Any]:
            return .array(array.map(cbor))
        case let number as Int:
            return number >= 0 ? .unsigned(UInt64(number)) : .negative(UInt64(-1 - number))
        case let text as String:
            return .text(text)
        default:
            Issue.record("unexpected JSON value \(value)")
            return .null
        }
    }

    @Test("attestation statements", arguments: files("attestation_statement_fido2"))
    func statement(_ file: String) throws {
        let vector = Self.load("attestation_statement_fido2", file)
        let expected = vector["expected"] as! [String: Any]
        let statement = Self.cbor(vector["statement_hex_encoded"]!)
        let authData = Data(hex: vector["auth_data_hex"] as! String)
        let clientDataHash = Data(hex: vector["client_data_hash_hex"] as! String)
        // A SafetyNet response is judged at the time it records (as other vectors carry valid_at).
        var time = Date()
        if let response = statement["response"]?.bytesValue, let jws = String(data: response, encoding: .utf8) {
            let payload = Self.bytes(String(jws.split(separator: ".")[1]))
            let milliseconds = (try JSONSerialization.jsonObject(with: payload) as! [String: Any])["timestampMs"] as! Double
            time = Date(timeIntervalSince1970: milliseconds / 1000)
        }
        let verify = {
            try AttestationStatementVerifier.verify(
                format: vector["fmt"] as! String,
                statement: statement,
                authData: authData,
                clientDataHash: clientDataHash,
                at: time
            )
        }
        if expected["result"] as? String == "valid" {
            let attestation = try verify()
            let types: [String: PasskeyAttestationType] = ["NONE": .none, "BASIC": .basic, "ATT_CA": .attestationCA, "ANON_CA": .anonymizationCA]
            #expect(attestation.type == types[expected["attestation_type"] as! String])
        } else {
            let error = #expect(throws: WebAuthnError.self) { try verify() }
            #expect(error?.problem == Self.expectedCode(expected["error"] as! String), "\(error.map(String.init(describing:)) ?? "")")
        }
    }
}

extension WebAuthnVectorTests {
    @Test("every passkey check's code is a 403 problem (400 for a malformed credential) and is documented in PROTOCOL.md")
    func codes() throws {
        let protocolText = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../docs/PROTOCOL.md"),
            encoding: .utf8
        )
        for code in WebAuthnError.allCodes {
            let status = APIError.status(of: ProblemCode(rawValue: code))
            #expect(status == (code == "passkey_malformed" ? .badRequest : .forbidden), "\(code)")
            let suffix = code.dropFirst("passkey_".count)
            #expect(protocolText.contains("`\(code)`") || protocolText.contains("`\(suffix)`"), "\(code) is not in PROTOCOL.md")
        }
    }
}

extension WebAuthnVectorTests {
    /// A small deterministic generator (SplitMix64), so a failure names a mutation that can be replayed.
    struct Mutations {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(max(bound, 1)))
        }
    }

    @Test(
        "every valid assertion changed in one byte (client data, authenticator data or signature) is refused with a passkey code",
        arguments: files("authentication")
    )
    func mutatedAssertions(_ file: String) throws {
        let vector = Self.load("authentication", file)
        guard (vector["expected"] as? [String: Any])?["result"] as? String == "valid" else { return }
        let inputs = vector["inputs"] as! [String: Any]
        let response = (vector["credential"] as! [String: Any])["response"] as! [String: Any]
        let parts = [Self.bytes(response["clientDataJSON"]), Self.bytes(response["authenticatorData"]), Self.bytes(response["signature"])]
        let stored = StoredPasskeyCredential(
            publicKey: Self.bytes(inputs["credential_public_key_b64url"]),
            signCount: UInt32(inputs["credential_current_sign_count"] as! Int),
            backupEligible: parts[1][parts[1].startIndex + 32] & 0x08 != 0
        )
        let party = try Self.relyingParty(inputs)
        var random = Mutations(state: UInt64(file.utf8.count))
        for round in 0..<96 {
            var mutated = parts
            let which = round % 3
            let index = random.next(mutated[which].count)
            mutated[which][mutated[which].startIndex + index] ^= UInt8(1 << random.next(8))
            do {
                _ = try party.verifyAuthentication(
                    clientDataJSON: mutated[0],
                    authenticatorData: mutated[1],
                    signature: mutated[2],
                    challenge: Self.bytes(inputs["expected_challenge_b64url"]),
                    stored: stored
                )
                Issue.record("a mutation of part \(which) at byte \(index) verified")
            } catch {
                #expect(error.code.hasPrefix("passkey_"), "\(error)")
            }
        }
    }

    @Test("truncated or changed attestation objects never crash: each gives a result or a passkey code", arguments: files("registration"))
    func mutatedRegistrations(_ file: String) async throws {
        let vector = Self.load("registration", file)
        let inputs = vector["inputs"] as! [String: Any]
        let response = (vector["credential"] as! [String: Any])["response"] as! [String: Any]
        let object = Self.bytes(response["attestationObject"])
        guard !object.isEmpty else { return }
        let party = try Self.relyingParty(inputs)
        let clientData = Self.bytes(response["clientDataJSON"])
        let challenge = Self.bytes(inputs["expected_challenge_b64url"])
        let time = (vector["valid_at"] as? String).map { AppAttestVectorTests.time($0 + "Z") } ?? Date()
        var random = Mutations(state: UInt64(object.count))
        for round in 0..<48 {
            var mutated = object
            if round % 2 == 0 {
                mutated = mutated.prefix(random.next(mutated.count))
            } else {
                mutated[mutated.startIndex + random.next(mutated.count)] ^= UInt8(1 << random.next(8))
            }
            do {
                _ = try await party.verifyRegistration(clientDataJSON: clientData, attestationObject: mutated, challenge: challenge, at: time)
            } catch {
                #expect(error.code.hasPrefix("passkey_"), "\(error)")
            }
        }
    }
}
