import BioAuthCore
import Foundation

/// Authenticator data (WebAuthn §6.1), parsed strictly: the fixed layout (``AuthenticatorData``, shared with App
/// Attest), then the credential public key when AT is set, the extensions when ED is set, and nothing after them.
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

    init(_ data: Data) throws(WebAuthnError) {
        let bytes = [UInt8](data)
        let header = try AuthenticatorData(bytes, attestedCredential: .whenFlagged, malformed: WebAuthnError.malformed)
        raw = data
        rpIDHash = header.rpIDHash
        flags = header.flags
        signCount = header.counter
        var position = header.end
        let decoder = CBORDecoder(maxInputSize: 16 * 1024, maxDepth: 8, maxItems: 256)
        if let credential = header.attestedCredential {
            let item: CBOR
            let used: Int
            do { (item, used) = try decoder.decodePrefix(Data(bytes[position...])) } catch {
                throw .malformed("the credential public key is not CBOR (\(error.code))")
            }
            let publicKey = try COSEKey(item)
            attested = AttestedCredential(
                aaguid: credential.aaguid,
                credentialID: credential.credentialID,
                publicKeyCBOR: Data(bytes[position..<position + used]),
                publicKey: publicKey
            )
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
