import BioAuthCore
import Foundation

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
