import BioAuthCore
import Crypto
import Foundation
import Logging

/// Seals what the server must keep but the database alone must not give away, under a key kept in a file outside the
/// database (`--pin-key`): payment PIN hashes, webhook signing secrets, and console operators' TOTP keys.
///
/// - **PIN hashes.** A 6-digit PIN has a million values, so a bcrypt hash alone falls to an offline search in minutes
///   once the database leaks. Sealed, the database alone gives nothing to search. Encrypting the hash (rather than
///   hashing an HMAC of the PIN) lets hashes stored before the key existed be sealed at start-up without their PINs.
/// - **Webhook secrets.** The server needs them in clear to sign deliveries, so they cannot be hashed; in clear in a
///   leaked dump they would let anyone forge `payment.authorized` to the bank's backend. They are sealed under a key
///   derived from the same file for that one purpose (``derived(for:)``), so a value of one kind never opens as the
///   other.
/// - **Operators' TOTP keys.** Like webhook secrets, needed in clear to check a code, and under a key of their own: a
///   dump alone does not give anyone an operator's second factor.
///
/// Each value is AES-256-GCM with the row it belongs to as authenticated data (the account id, the endpoint id): a
/// sealed value copied onto another row does not open there.
///
/// Stored form: `v1.` key id (16 hex digits: the first 8 bytes of SHA-256 of the key) `.` base64url(nonce ‖
/// ciphertext ‖ tag). Values written before sealing existed are recognised by their kind (a bcrypt hash starts with
/// `$2`, a webhook secret with `whsec_`) and sealed at start-up.
struct SecretSealer: Sendable {
    private let key: SymmetricKey
    /// Names the key in sealed values, so a value sealed under another key is told apart from a damaged one.
    let keyID: String

    init(key: SymmetricKey) {
        self.key = key
        keyID = key.withUnsafeBytes { Data(SHA256.hash(data: Data($0)).prefix(8)) }.map { String(format: "%02x", $0) }.joined()
    }

    /// One key for this process, for `":memory:"` (tests; several servers in one process share it).
    private static let processKey = SymmetricKey(size: .bits256)

    /// Loads the key at `path` (a line of base64url, 32 bytes), or creates it there (mode 0600, said on `logger`).
    static func load(path: String, logger: Logger? = nil) throws -> SecretSealer {
        if path == ":memory:" { return SecretSealer(key: processKey) }
        let key = try SecretFile.loadOrCreate(
            path: path,
            what: "PIN key (32 bytes of base64url)",
            logger: logger,
            parse: { text in
                Base64URL.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.count == 32 ? SymmetricKey(data: $0) : nil }
            },
            make: {
                let key = SymmetricKey(size: .bits256)
                return (key, key.withUnsafeBytes { Base64URL.encode(Data($0)) } + "\n")
            }
        )
        return SecretSealer(key: key)
    }

    /// A sealer for one purpose, whose key is derived from this one (HKDF-SHA256, the purpose as info): values it seals
    /// open only with a sealer derived for the same purpose from the same file.
    func derived(for purpose: String) -> SecretSealer {
        SecretSealer(key: HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("bioauth sealed \(purpose) v1".utf8), outputByteCount: 32))
    }

    /// `plaintext` sealed for the row `owner` (an account id, an endpoint id).
    func seal(_ plaintext: String, for owner: String) throws -> String {
        let box = try AES.GCM.seal(Data(plaintext.utf8), using: key, authenticating: Data(owner.utf8))
        guard let combined = box.combined else { throw APIError.internalError }
        return "v1.\(keyID).\(Base64URL.encode(combined))"
    }

    /// What `stored` holds for `owner`; nil when it was sealed under another key, for another row, or is damaged.
    func open(_ stored: String, for owner: String) -> String? {
        let parts = stored.split(separator: ".", maxSplits: 2)
        guard parts.count == 3, parts[0] == "v1", parts[1] == keyID, let combined = Base64URL.decode(String(parts[2])),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Data(owner.utf8))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    /// HMAC-SHA256 of `text` under this key, base64url: a pepper for short secrets stored hashed (customers' recovery
    /// codes), so a leaked database alone gives nothing to search.
    func authenticationCode(_ text: String) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
    }

    /// Whether `stored` names this key (so a failure to open it is damage or tampering, not a wrong key file).
    func sealedWithThisKey(_ stored: String) -> Bool { stored.hasPrefix("v1.\(keyID).") }
}

/// The sealers made from the PIN key file, derived once: PIN hashes under the file's key itself (so hashes sealed
/// before webhook secrets were sealed still open), webhook secrets under a key derived for them.
struct Sealers: Sendable {
    let pins: SecretSealer
    let webhookSecrets: SecretSealer
    /// Console operators' TOTP keys (the server needs them in clear to check codes).
    let operatorTOTPKeys: SecretSealer
    /// The pepper of customers' recovery codes (``SecretSealer/authenticationCode(_:)``).
    let recoveryCodes: SecretSealer

    init(_ key: SecretSealer) {
        pins = key
        webhookSecrets = key.derived(for: "webhook secrets")
        operatorTOTPKeys = key.derived(for: "operator totp keys")
        recoveryCodes = key.derived(for: "recovery codes")
    }

    /// The sealers of the key file at `path` (created if missing; `":memory:"` for a key that lives with the process).
    static func load(path: String, logger: Logger? = nil) throws -> Sealers { Sealers(try SecretSealer.load(path: path, logger: logger)) }
}
