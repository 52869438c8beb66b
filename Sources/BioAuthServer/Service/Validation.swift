import BioAuthCore
import Foundation

/// Checks of request fields, made before anything is read or written.
enum Validation {
    /// 3-64 characters of `A-Z a-z 0-9 . _ @ + -`, compared case-insensitively (returned lowercased).
    static func username(_ raw: String) throws -> String {
        guard (3...64).contains(raw.utf8.count),
            raw.utf8.allSatisfy({ isAlphanumeric($0) || [0x2E, 0x5F, 0x40, 0x2B, 0x2D].contains($0) })
        else { throw APIError(.invalidUsername, "A username is 3-64 characters of A-Z a-z 0-9 . _ @ + -.") }
        return raw.lowercased()
    }

    /// At least 8 characters (Unicode scalars, as JSON Schema's `minLength` counts them: three Chinese characters are
    /// three, not nine) and at most 72 bytes of UTF-8: bcrypt ignores everything after byte 72, so longer passwords are
    /// refused rather than silently truncated.
    static func newPassword(_ password: String) throws {
        guard password.unicodeScalars.count >= 8, password.utf8.count <= 72 else {
            throw APIError(.invalidPassword, "A password is at least 8 characters and at most 72 bytes of UTF-8.")
        }
    }

    /// 1-64 characters of `A-Z a-z 0-9 . _ -`.
    static func installationID(_ raw: String) throws -> String {
        guard (1...64).contains(raw.utf8.count), raw.utf8.allSatisfy({ isAlphanumeric($0) || [0x2E, 0x5F, 0x2D].contains($0) })
        else { throw APIError(.invalidInstallationID, "An installation id is 1-64 characters of A-Z a-z 0-9 . _ -.") }
        return raw
    }

    /// A device name by the rule of every name a user is shown (``DisplayName``), in NFC.
    static func deviceName(_ raw: String) throws -> String {
        try displayName(raw, field: "deviceName", code: .invalidDeviceName)
    }

    /// A payee id: 1-64 characters of `A-Z a-z 0-9 . _ : -` (`invalid_payee` otherwise).
    static func payeeID(_ payeeID: String) throws {
        guard (1...64).contains(payeeID.utf8.count),
            payeeID.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || [0x2E, 0x5F, 0x3A, 0x2D].contains(byte)
            })
        else { throw APIError(.invalidPayee, "payeeId is 1-64 characters of A-Z a-z 0-9 . _ : -") }
    }

    /// A name shown to the user (a payee's, a device's): 1-64 characters by ``DisplayName``'s rule, returned in NFC,
    /// the form that is stored, shown and signed. The refusal says which rule, never echoing the name.
    static func displayName(_ raw: String, field: String, code: ProblemCode) throws -> String {
        switch DisplayName.checked(raw, maxCharacters: 64) {
        case .success(let name): return name
        case .failure(let refusal): throw APIError(code, "\(field) \(refusal.description).")
        }
    }

    /// Whether `text` can be shown as it is: 1 to `maxCharacters` characters, not only white space, and no
    /// control, format (bidi overrides, zero-width), separator, private-use or unassigned characters.
    static func isDisplayable(_ text: String, maxCharacters: Int) -> Bool {
        let bad = text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
            default: false
            }
        }
        return (1...maxCharacters).contains(text.count) && !bad && !text.trimmingCharacters(in: .whitespaces).isEmpty
    }

    /// A base64url field of exactly `length` bytes (any length when nil) and at most `maxLength` bytes.
    ///
    /// Keys, key ids, hashes and signatures are short; the default bound of 3072 bytes (4096 characters) is far
    /// above all of them. An App Attest attestation is 5-6 KiB and passes its own bound.
    static func bytes(_ raw: String, field: String, length: Int? = nil, maxLength: Int = 3072) throws -> Data {
        guard raw.utf8.count <= (maxLength * 4 + 2) / 3, let data = Base64URL.decode(raw) else {
            throw APIError(.invalidEncoding, "\(field) is not unpadded base64url of at most \(maxLength) bytes.")
        }
        if let length, data.count != length {
            throw APIError(.invalidEncoding, "\(field) must be \(length) bytes.")
        }
        return data
    }

    /// An App Attest assertion as sent, decoded whatever the deployment's App Attest mode (a field that is sent must be
    /// well formed even where it is not used): canonical base64url of 1 byte to the verifier's bound; `nil` when absent.
    static func appAttestAssertion(_ raw: String?) throws -> Data? {
        guard let raw else { return nil }
        let assertion = try bytes(raw, field: "appAttestAssertion", maxLength: AppAttestVerifier.maxObjectSize)
        guard !assertion.isEmpty else { throw APIError(.invalidEncoding, "appAttestAssertion is empty.") }
        return assertion
    }

    /// A non-negative signature counter.
    static func counter(_ raw: Int64) throws -> UInt64 {
        guard raw >= 0 else { throw APIError(.malformedRequest, "counter must not be negative.") }
        return UInt64(raw)
    }

    /// An identifier the server issued (a lowercase UUID); anything else cannot exist.
    static func isIssuedID(_ raw: String) -> Bool {
        raw.utf8.count == 36 && UUID(uuidString: raw) != nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// Whether `a` and `b` hold the same bytes, in time that depends on their length only (secrets and challenges are
    /// compared so that the time taken says nothing about where they differ).
    static func constantTimeEqual<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
