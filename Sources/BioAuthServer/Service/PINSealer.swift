import BioAuthCore
import Crypto
import Foundation

/// The pepper on payment PIN hashes: each bcrypt hash is stored encrypted (AES-256-GCM) under a key kept in a
/// file outside the database, and bound to its account.
///
/// A 6-digit PIN has a million values, so a bcrypt hash alone falls to an offline search in minutes once the
/// database leaks. Sealed, the database alone gives nothing to search. Encrypting the hash (rather than hashing
/// an HMAC of the PIN) lets hashes stored before the key existed be sealed at start-up without their PINs, and
/// lets a later key re-seal them. The account id is authenticated data, so a sealed hash copied onto another
/// account's row does not open there.
///
/// Stored form: `v1.` key id (16 hex digits: the first 8 bytes of SHA-256 of the key) `.` base64url(nonce ‖
/// ciphertext ‖ tag). A value starting with `$2` is a legacy, unsealed bcrypt hash.
struct PINSealer: Sendable {
    private let key: SymmetricKey
    /// Names the key in sealed values, so a value sealed under another key is told apart from a damaged one.
    let keyID: String

    init(key: SymmetricKey) {
        self.key = key
        keyID = key.withUnsafeBytes { Data(SHA256.hash(data: Data($0)).prefix(8)) }.map { String(format: "%02x", $0) }.joined()
    }

    /// One key for this process, for `":memory:"` (tests; several servers in one process share it).
    private static let processKey = SymmetricKey(size: .bits256)

    /// Loads the key at `path` (a line of base64url, 32 bytes), or creates it there (mode 0600).
    static func load(path: String) throws -> PINSealer {
        if path == ":memory:" { return PINSealer(key: processKey) }
        let key = try SecretFile.loadOrCreate(
            path: path, what: "PIN key (32 bytes of base64url)",
            parse: { text in
                Base64URL.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.count == 32 ? SymmetricKey(data: $0) : nil }
            },
            make: {
                let key = SymmetricKey(size: .bits256)
                return (key, key.withUnsafeBytes { Base64URL.encode(Data($0)) } + "\n")
            })
        return PINSealer(key: key)
    }

    /// Whether `stored` is a bcrypt hash from before sealing.
    static func isLegacy(_ stored: String) -> Bool { stored.hasPrefix("$2") }

    /// The SQL `LIKE` pattern of legacy hashes (``isLegacy(_:)``; `$` and `2` are not wildcards).
    static let legacyPattern = "$2%"

    /// `bcryptHash` sealed for `account`.
    func seal(_ bcryptHash: String, account: String) throws -> String {
        let box = try AES.GCM.seal(Data(bcryptHash.utf8), using: key, authenticating: Data(account.utf8))
        guard let combined = box.combined else { throw APIError.internalError }
        return "v1.\(keyID).\(Base64URL.encode(combined))"
    }

    /// The bcrypt hash in `stored` for `account`: unsealed, or as it is when it is a legacy hash; nil when it was
    /// sealed under another key, for another account, or is damaged.
    func open(_ stored: String, account: String) -> String? {
        if Self.isLegacy(stored) { return stored }
        let parts = stored.split(separator: ".", maxSplits: 2)
        guard parts.count == 3, parts[0] == "v1", parts[1] == keyID, let combined = Base64URL.decode(String(parts[2])),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Data(account.utf8))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    /// Whether `stored` names this key (so a failure to open it is damage or tampering, not a wrong key file).
    func sealedWithThisKey(_ stored: String) -> Bool { stored.hasPrefix("v1.\(keyID).") }
}
