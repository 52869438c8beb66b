import Foundation

/// The fixed-layout start of WebAuthn authenticator data (§6.1), which App Attest reuses unchanged: the relying-party
/// id hash, the flags, the signature counter and the attested credential's aaguid and id (read when the AT flag is
/// set, unless ``AttestedCredentialRule/ignored`` says not to).
/// What may follow the credential id (its COSE key, then extensions) is variable-length CBOR; a caller that needs it
/// reads it from ``end``.
struct AuthenticatorData {
    /// SHA-256 of the relying-party id (for App Attest, of the app id).
    let rpIDHash: Data
    let flags: UInt8
    let counter: UInt32
    /// Present when it was read (see ``AttestedCredentialRule``).
    let attestedCredential: AttestedCredential?
    /// The offset just after what was read: 37, or just after the credential id.
    let end: Int

    struct AttestedCredential {
        let aaguid: Data
        let credentialID: Data
    }

    /// When the attested credential data (aaguid, credential id, key) is read. A caller that needs it (an App Attest
    /// attestation) refuses data without it.
    enum AttestedCredentialRule {
        /// When the AT flag is set, as WebAuthn says.
        case whenFlagged
        /// Never: an App Attest assertion is 37 bytes, though Apple's devices set the AT flag in it.
        case ignored
    }

    /// The AT flag: attested credential data follows the counter.
    static let attestedCredentialFlag: UInt8 = 0x40
    /// The longest credential id WebAuthn allows (§7.1 step 26); App Attest's key ids are 32 bytes.
    static let maxCredentialIDLength = 1023

    /// Reads the fixed layout of `bytes`, the attested credential data as `rule` says; what does not fit is refused
    /// with `malformed(reason)`, so that each verifier reports it in its own error type.
    init<Failure: Error>(_ bytes: [UInt8], attestedCredential rule: AttestedCredentialRule, malformed: (String) -> Failure) throws(Failure) {
        guard bytes.count >= 37 else { throw malformed("authenticator data is shorter than 37 bytes") }
        rpIDHash = Data(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard rule == .whenFlagged, flags & Self.attestedCredentialFlag != 0 else {
            attestedCredential = nil
            end = 37
            return
        }
        guard bytes.count >= 55 else { throw malformed("attested credential data is truncated") }
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard length <= Self.maxCredentialIDLength else { throw malformed("the credential id is longer than 1023 bytes") }
        guard bytes.count >= 55 + length else { throw malformed("the credential id runs past the authenticator data") }
        attestedCredential = AttestedCredential(aaguid: Data(bytes[37..<53]), credentialID: Data(bytes[55..<55 + length]))
        end = 55 + length
    }
}
