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
        guard json.count <= 4096, String(data: json, encoding: .utf8) != nil,
            let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any]
        else { throw .malformed("clientDataJSON is not a UTF-8 JSON object") }
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
        guard type == expectedType else { throw WebAuthnError(.passkeyTypeMismatch, "clientDataJSON.type is \(type.prefix(32)), not \(expectedType)") }
        guard !challenge.isEmpty, Validation.constantTimeEqual(challenge, expectedChallenge) else { throw WebAuthnError(.passkeyChallengeMismatch, "clientDataJSON.challenge is not the challenge issued") }
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

/// Authenticator data (WebAuthn §6.1), parsed strictly: the attested credential data when AT is set, the
/// extensions when ED is set, and nothing after them.
struct WebAuthnAuthenticatorData {
    let raw: Data
    let rpIDHash: Data
    let flags: UInt8
    let signCount: UInt32
    /// Present when the AT flag is set (registration).
    let attested: AttestedCredential?

    struct AttestedCredential {
        let aaguid: Data
        let credentialID: Data
        /// The COSE_Key bytes exactly as the authenticator wrote them.
        let publicKeyCBOR: Data
        let publicKey: COSEKey
    }

    var userPresent: Bool { flags & 0x01 != 0 }
    var userVerified: Bool { flags & 0x04 != 0 }
    var backupEligible: Bool { flags & 0x08 != 0 }
    var backedUp: Bool { flags & 0x10 != 0 }

    /// The longest credential id WebAuthn allows (§7.1 step 26).
    static let maxCredentialIDLength = 1023

    init(_ data: Data) throws(WebAuthnError) {
        let bytes = [UInt8](data)
        guard bytes.count >= 37 else { throw .malformed("authenticator data is shorter than 37 bytes") }
        raw = data
        rpIDHash = Data(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var position = 37
        let decoder = CBORDecoder(maxInputSize: 16 * 1024, maxDepth: 8, maxItems: 256)
        if flags & 0x40 != 0 {
            guard bytes.count >= position + 18 else { throw .malformed("attested credential data is truncated") }
            let aaguid = Data(bytes[position..<position + 16])
            let length = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
            position += 18
            guard length <= Self.maxCredentialIDLength else { throw .malformed("the credential id is longer than 1023 bytes") }
            guard bytes.count >= position + length else { throw .malformed("the credential id runs past the authenticator data") }
            let credentialID = Data(bytes[position..<position + length])
            position += length
            let item: CBOR
            let used: Int
            do { (item, used) = try decoder.decodePrefix(Data(bytes[position...])) } catch {
                throw .malformed("the credential public key is not CBOR (\(error.code))")
            }
            let publicKey = try COSEKey(item)
            attested = AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKeyCBOR: Data(bytes[position..<position + used]), publicKey: publicKey)
            position += used
        } else {
            attested = nil
        }
        if flags & 0x80 != 0 {
            do {
                let (item, used) = try decoder.decodePrefix(Data(bytes[position...]))
                guard case .map = item else { throw WebAuthnError.malformed("the extensions are not a map") }
                position += used
            } catch let error as WebAuthnError {
                throw error
            } catch {
                throw .malformed("the extensions are not CBOR")
            }
        }
        guard position == bytes.count else { throw .malformed("authenticator data has \(bytes.count - position) bytes left over") }
    }
}
