import BioAuthCore
import Foundation

/// The text of a binding code: 25 characters of Crockford's base32 (`0-9 A-Z` without `I L O U`), shown in five groups
/// of five for reading out; what a person types is taken in any case, with or without the hyphens and spaces, and with
/// `I L` read as `1` and `O` as `0`.
enum BindingCodeText {
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The code of 16 random bytes: their first 125 bits, 5 to a character, grouped `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX`.
    static func make(_ bytes: Data) -> String { make(bytes, length: 25, group: 5) }

    /// The code as issued, from what a person typed; nil for anything that cannot be a code.
    static func canonical(_ typed: String) -> String? { canonical(typed, length: 25, group: 5) }

    /// `length` characters (5 bits each) from `bytes`, in groups of `group` joined by hyphens.
    static func make(_ bytes: Data, length: Int, group: Int) -> String {
        var bits = 0
        var value = 0
        var characters: [Character] = []
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5, characters.count < length {
                bits -= 5
                characters.append(alphabet[(value >> bits) & 31])
            }
            value &= (1 << bits) - 1
        }
        return grouped(characters, group: group)
    }

    /// A code of `length` characters as issued, from what a person typed; nil for anything that cannot be one.
    static func canonical(_ typed: String, length: Int, group: Int) -> String? {
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
        guard characters.count == length else { return nil }
        return grouped(characters, group: group)
    }

    private static func grouped(_ characters: [Character], group: Int) -> String {
        stride(from: 0, to: characters.count, by: group).map { String(characters[$0..<min($0 + group, characters.count)]) }
            .joined(separator: "-")
    }
}

/// The text of a customer's recovery code: 16 characters of the same alphabet (80 bits), grouped `XXXX-XXXX-XXXX-XXXX`,
/// read as binding codes are (any case, hyphens and spaces ignored, `I L` as `1`, `O` as `0`).
enum RecoveryCodeText {
    /// The code of 10 random bytes.
    static func make(_ bytes: Data) -> String { BindingCodeText.make(bytes, length: 16, group: 4) }

    /// The code as issued, from what a person typed; nil for anything that cannot be one.
    static func canonical(_ typed: String) -> String? { BindingCodeText.canonical(typed, length: 16, group: 4) }
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
