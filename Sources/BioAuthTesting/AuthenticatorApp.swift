import Crypto
import Foundation

/// An authenticator app, as an operator's phone runs it: it takes the key the console shows (base32, or the
/// `otpauth://` URI) and shows RFC 6238 codes (HMAC-SHA1, 6 digits, 30-second steps). Written apart from the server's
/// TOTP check, so tests of operator sign-in check one against the other.
public struct AuthenticatorApp: Sendable {
    /// The key's bytes.
    public let key: Data

    /// The app after the key `typed` (base32, RFC 4648, padding and spaces ignored) was entered; nil for a key with a
    /// character outside the base32 alphabet.
    public init?(typed: String) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0
        var value = 0
        var bytes = Data()
        for character in typed.uppercased() where character != "=" && character != " " {
            guard let index = alphabet.firstIndex(of: character) else { return nil }
            value = (value << 5 | index) & 0xFFFF
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((value >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        key = bytes
    }

    /// The app for raw key bytes (RFC 6238's own vectors use the ASCII text `12345678901234567890`).
    public init(key: Data) { self.key = key }

    /// The code the app shows at `date`.
    public func code(at date: Date) -> String {
        let step = UInt64(date.timeIntervalSince1970 / 30).bigEndian
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: withUnsafeBytes(of: step) { Data($0) }, using: SymmetricKey(data: key)))
        let offset = Int(mac[19] & 0x0F)
        let value = (UInt32(mac[offset] & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3]))
        return String(format: "%06u", value % 1_000_000)
    }
}
