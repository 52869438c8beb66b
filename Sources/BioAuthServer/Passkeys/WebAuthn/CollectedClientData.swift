import BioAuthCore
import Foundation

/// The browser's `clientDataJSON` (WebAuthn §5.8.1): what the client says it was asked to sign, and where.
struct CollectedClientData {
    let type: String
    /// The challenge, decoded from base64url.
    let challenge: Data
    let origin: String
    let crossOrigin: Bool
    let topOrigin: String?
    /// `tokenBinding.status`, when present.
    let tokenBindingStatus: String?

    /// Parses `json`, which must be a UTF-8 JSON object with string `type`, `challenge` and `origin`.
    init(_ json: Data) throws(WebAuthnError) {
        guard json.count <= 4096, String(data: json, encoding: .utf8) != nil else { throw .malformed("clientDataJSON is not UTF-8") }
        // The strict reader request bodies go through: no member twice (which `origin` would a lenient parser take?), no
        // byte-order mark, no trailing comma, nothing but RFC 8259 JSON.
        switch JSONMemberNames.scan(json) {
        case .unique: break
        case .duplicate: throw .malformed("clientDataJSON names a member more than once")
        case .invalid: throw .malformed("clientDataJSON is not strict JSON (RFC 8259)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw .malformed("clientDataJSON is not a JSON object")
        }
        guard let type = object["type"] as? String, let challenge = object["challenge"] as? String,
            let origin = object["origin"] as? String
        else { throw .malformed("clientDataJSON needs string type, challenge and origin") }
        self.type = type
        // A challenge that is not canonical base64url cannot be one the server issued.
        self.challenge = Base64URL.decode(challenge) ?? Data()
        self.origin = origin
        if let crossOrigin = object["crossOrigin"] {
            guard let flag = crossOrigin as? Bool else { throw .malformed("clientDataJSON's crossOrigin is not a boolean") }
            self.crossOrigin = flag
        } else {
            self.crossOrigin = false
        }
        topOrigin = object["topOrigin"] as? String
        // Token binding left WebAuthn in Level 3; a Level 2 object must carry a status. Older Firefox sent the
        // string "unused", which binds nothing and is ignored.
        if let binding = object["tokenBinding"] as? [String: Any] {
            guard let status = binding["status"] as? String else { throw .malformed("clientDataJSON's tokenBinding has no status") }
            tokenBindingStatus = status
        } else {
            tokenBindingStatus = nil
        }
    }

    /// The checks WebAuthn §7.1 steps 7–11 and §7.2 steps 10–14 make on collected client data.
    func verify(type expectedType: String, challenge expectedChallenge: Data, origins: [String]) throws(WebAuthnError) {
        guard type == expectedType else {
            throw WebAuthnError(.passkeyTypeMismatch, "clientDataJSON.type is \(type.prefix(32)), not \(expectedType)")
        }
        guard !challenge.isEmpty, Validation.constantTimeEqual(challenge, expectedChallenge) else {
            throw WebAuthnError(.passkeyChallengeMismatch, "clientDataJSON.challenge is not the challenge issued")
        }
        guard origins.contains(origin) else { throw WebAuthnError(.passkeyOriginMismatch, "origin \(origin.prefix(100)) is not configured") }
        // BioAuth's pages are never framed by another site, so a cross-origin ceremony is refused.
        guard !crossOrigin, topOrigin == nil || topOrigin == origin else {
            throw WebAuthnError(.passkeyOriginMismatch, "the ceremony ran in a cross-origin frame")
        }
        if let status = tokenBindingStatus, status != "present", status != "supported" {
            throw WebAuthnError(.passkeyTokenBinding, "tokenBinding.status \(status.prefix(32)) is neither present nor supported")
        }
    }
}
