import BioAuthCore
import Foundation

/// The text of a binding code: 25 characters of Crockford's base32 (`0-9 A-Z` without `I L O U`), shown in five groups
/// of five for reading out; what a person types is taken in any case, with or without the hyphens and spaces, and with
/// `I L` read as `1` and `O` as `0`.
enum BindingCodeText {
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The code of 16 random bytes: their first 125 bits, 5 to a character, grouped `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX`.
    static func make(_ bytes: Data) -> String {
        var bits = 0
        var value = 0
        var characters: [Character] = []
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5, characters.count < 25 {
                bits -= 5
                characters.append(alphabet[(value >> bits) & 31])
            }
            value &= (1 << bits) - 1
        }
        return stride(from: 0, to: 25, by: 5).map { String(characters[$0..<$0 + 5]) }.joined(separator: "-")
    }

    /// The code as issued, from what a person typed; nil for anything that cannot be a code.
    static func canonical(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        var characters: [Character] = []
        for character in typed.uppercased() where character != "-" && character != " " {
            let read: Character =
                switch character {
                case "I", "L": "1"
                case "O": "0"
                default: character
                }
            guard alphabet.contains(read) else { return nil }
            characters.append(read)
        }
        guard characters.count == 25 else { return nil }
        return stride(from: 0, to: 25, by: 5).map { String(characters[$0..<$0 + 5]) }.joined(separator: "-")
    }
}

extension BiometryKind {
    /// Apple's name of the sensor, as a binding request shows it.
    var productName: String {
        switch self {
        case .faceID: "Face ID"
        case .touchID: "Touch ID"
        case .opticID: "Optic ID"
        default: "no biometry"
        }
    }
}
