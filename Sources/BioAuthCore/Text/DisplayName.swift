import Foundation

/// The rule for a name a prompt shows the user — a payee's ("Pay ¥88.00 to Coffee Shop") or a device's — so that
/// a name cannot look like another one.
///
/// A name is taken in Unicode NFC (``checked(_:maxCharacters:)`` returns it normalized; that form is stored,
/// shown and signed). Then:
/// 1. 1 to `maxCharacters` characters; U+0020 is the only space, never first, last or doubled. Other spaces
///    (U+00A0, U+2000–U+200A, U+202F, U+3000, ...), controls, format characters (bidi, zero-width), default-ignorable
///    characters (the Hangul fillers U+3164 and U+115F, U+034F, variation selectors) and private-use or unassigned
///    code points are refused.
/// 2. Every other character is a letter of an allowed script, a combining mark on a letter, a decimal digit, or
///    one of ``punctuation``. Allowed scripts: Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic, Devanagari,
///    Bengali, Thai, Georgian, Hangul, Hiragana, Katakana, Bopomofo, Han. Symbols, emoji, fullwidth Latin letters
///    and digits, and letters of other scripts are refused.
/// 3. Scripts mix only as Unicode TS #39's "moderately restrictive" level allows, made stricter: one script; Latin
///    with Han and Japanese kana, with Han and Bopomofo, or with Han and Hangul; or Latin with one other script
///    that is not Cyrillic, Greek or Armenian ("Al Noor تجارة" is fine). "Соffee Shop" with a Cyrillic "С" is refused.
/// 4. A name entirely in Cyrillic or Greek whose every letter looks like a Latin letter ("Сое", "ΤΟΡ") is
///    refused: it would read as a Latin name (a whole-script confusable, TS #39 §4).
/// 5. Decimal digits come from one numbering system (ASCII `0-9`, or Arabic-Indic, or ...; not mixed).
/// 6. At most two combining marks on one letter, never the same mark twice in a row, counted on the name's NFD (where
///    "é" is "e" and a mark), so that a mark NFC folds into a precomposed letter is counted too; and no dot above
///    (U+0307) on a dotless i or j ("ı̇" reads as "i").
///
/// A registry of such names also keeps them apart from each other: ``lookalikeKeys(_:)``.
public enum DisplayName {
    /// Why a name was refused. Never carries the name itself (it is attacker-chosen text).
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// A short English reason, for problem details and logs.
        public let description: String
    }

    /// Punctuation allowed beside letters and digits: ASCII `& ' - . , ( ) / # + ! : _ @` and the CJK and
    /// typographic forms names are written with (’ · ・ （ ） 、 。 ， ！ ： ＆ – —).
    public static let punctuation: Set<Unicode.Scalar> = Set(
        "&'-.,()/#+!:_@\u{2019}\u{00B7}\u{30FB}\u{FF08}\u{FF09}\u{3001}\u{3002}\u{FF0C}\u{FF01}\u{FF1A}\u{FF06}\u{2013}\u{2014}"
            .unicodeScalars
    )

    /// The name in NFC if it keeps every rule above, or the first rule it breaks.
    public static func checked(_ raw: String, maxCharacters: Int) -> Result<String, Refusal> {
        checked(raw, maxCharacters: maxCharacters, wholeName: true)
    }

    /// The symbols a message may hold beside a name's punctuation: currency signs and `% ? =`, so that an approval's
    /// binding message can say "Raise the daily transfer limit to ¥50,000".
    public static let messageSymbols: Set<Unicode.Scalar> = Set("\u{00A5}\u{FFE5}$\u{20AC}\u{00A3}%?=".unicodeScalars)

    /// A short message shown verbatim on the phone (an approval's binding message): the rule of ``checked(_:maxCharacters:)``
    /// with ``messageSymbols`` allowed too.
    public static func checkedMessage(_ raw: String, maxCharacters: Int) -> Result<String, Refusal> {
        checked(raw, maxCharacters: maxCharacters, wholeName: true, symbols: messageSymbols)
    }

    /// ``checked(_:maxCharacters:)``; without `wholeName`, only the rules a single character can break; `symbols` are
    /// allowed beside ``punctuation``.
    private static func checked(_ raw: String, maxCharacters: Int, wholeName: Bool, symbols: Set<Unicode.Scalar> = []) -> Result<String, Refusal> {
        let name = raw.precomposedStringWithCanonicalMapping
        func refuse(_ reason: String) -> Result<String, Refusal> { .failure(Refusal(description: reason)) }
        guard (1...maxCharacters).contains(name.count), name.utf8.count <= maxCharacters * 16 else {
            return refuse("must be 1 to \(maxCharacters) characters")
        }
        var scripts = Set<Script>()
        var digitZero: UInt32?
        var marksOnBase = 0
        var onLetter = false
        var previous: Unicode.Scalar?
        var base: Unicode.Scalar?
        var allConfusable = true
        // The marks are counted on the decomposed form: NFC would hide the first mark inside a precomposed letter.
        for scalar in name.decomposedStringWithCanonicalMapping.unicodeScalars {
            defer { previous = scalar }
            let properties = scalar.properties
            if scalar == " " {
                guard let previous, previous != " " else { return refuse("may not start with a space or hold two spaces in a row") }
                (marksOnBase, onLetter) = (0, false)
                continue
            }
            if properties.isDefaultIgnorableCodePoint { return refuse("holds an invisible character (U+\(hex(scalar)))") }
            switch properties.generalCategory {
            case .spaceSeparator, .lineSeparator, .paragraphSeparator:
                return refuse("holds a space other than U+0020 (U+\(hex(scalar)))")
            case .control, .format, .surrogate, .privateUse, .unassigned:
                return refuse("holds a control, format, private-use or unassigned character (U+\(hex(scalar)))")
            case .nonspacingMark, .spacingMark, .enclosingMark:
                guard onLetter, marksOnBase < 2, previous != scalar else {
                    return refuse("holds a combining mark that is not on a letter, or too many on one")
                }
                if scalar == "\u{0307}", base == "\u{0131}" || base == "\u{0237}" {
                    return refuse("holds a dotless i or j with a dot above, which reads as i or j")
                }
                marksOnBase += 1
                // A mark belongs to its letter's script (Inherited); marks of a script of their own count as it.
                if let script = Script(scalar) { scripts.insert(script) }
                continue
            case .decimalNumber:
                guard let value = properties.numericValue else { return refuse("holds an unusual digit") }
                let zero = scalar.value - UInt32(value)
                guard digitZero == nil || digitZero == zero else { return refuse("mixes digits of different numbering systems") }
                guard zero == 0x30 || Script(scalar) != nil else { return refuse("holds a digit of an unsupported script (U+\(hex(scalar)))") }
                digitZero = zero
                (marksOnBase, onLetter) = (0, false)
                continue
            default: break
            }
            (marksOnBase, onLetter) = (0, false)
            if punctuation.contains(scalar) || symbols.contains(scalar) { continue }
            guard properties.isAlphabetic, let script = Script(scalar) else {
                return refuse("holds a character that is not a letter, digit or allowed punctuation (U+\(hex(scalar)))")
            }
            scripts.insert(script)
            onLetter = true
            base = scalar
            if !Script.latinLookalikes.contains(scalar) { allConfusable = false }
        }
        guard wholeName else { return .success(name) }
        guard previous != " " else { return refuse("may not end with a space") }
        guard Script.isAllowedMix(scripts) else {
            return refuse("mixes scripts that can imitate each other (\(scripts.map(\.rawValue).sorted().joined(separator: ", ")))")
        }
        if allConfusable, let only = scripts.first, scripts.count == 1, only == .cyrillic || only == .greek {
            return refuse("is written in \(only.rawValue) letters that all look like Latin ones")
        }
        return .success(name)
    }

    /// `raw` made to keep the rule, for names the user did not type for a prompt (a phone's own name, which may
    /// hold emoji or odd spaces): other white space becomes U+0020, characters that break the rule are dropped,
    /// spaces are collapsed and trimmed, and the result is cut to `maxCharacters`. `fallback` when nothing that
    /// keeps the rule is left (a name that mixes scripts, say).
    public static func fitted(_ raw: String, maxCharacters: Int, fallback: String) -> String {
        var kept = ""
        for character in raw.precomposedStringWithCanonicalMapping {
            if character.isWhitespace {
                if !kept.isEmpty, kept.last != " " { kept.append(" ") }
            } else if case .success = checked(String(character), maxCharacters: 1, wholeName: false) {
                kept.append(character)
            }
        }
        var name = String(kept.prefix(maxCharacters))
        while name.last == " " { name.removeLast() }
        guard case .success(let fitted) = checked(name, maxCharacters: maxCharacters) else { return fallback }
        return fitted
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The scripts a name may be written in, each with the code point ranges of its letters (Unicode's
    /// Scripts.txt, by block; the Swift standard library does not expose the Script property).
    enum Script: String, CaseIterable, Hashable {
        case latin = "Latin"
        case greek = "Greek"
        case cyrillic = "Cyrillic"
        case armenian = "Armenian"
        case hebrew = "Hebrew"
        case arabic = "Arabic"
        case devanagari = "Devanagari"
        case bengali = "Bengali"
        case thai = "Thai"
        case georgian = "Georgian"
        case hangul = "Hangul"
        case hiragana = "Hiragana"
        case katakana = "Katakana"
        case bopomofo = "Bopomofo"
        case han = "Han"

        var ranges: [ClosedRange<UInt32>] {
            switch self {
            case .latin:
                [
                    0x41...0x5A, 0x61...0x7A, 0xAA...0xAA, 0xBA...0xBA, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x24F, 0x1E00...0x1EFF, 0x2C60...0x2C7F,
                    0xA720...0xA7FF,
                ]
            case .greek: [0x370...0x373, 0x376...0x377, 0x37B...0x37D, 0x37F...0x37F, 0x386...0x386, 0x388...0x3E1, 0x3F0...0x3FF, 0x1F00...0x1FFF]
            case .cyrillic: [0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F]
            case .armenian: [0x531...0x58F]
            case .hebrew: [0x591...0x5FF]
            case .arabic:
                [
                    0x600...0x604, 0x606...0x60B, 0x60D...0x61A, 0x61C...0x61E, 0x620...0x63F, 0x641...0x64A, 0x656...0x66F, 0x671...0x6DC,
                    0x6DE...0x6FF, 0x750...0x77F, 0x8A0...0x8FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF,
                ]
            case .devanagari: [0x900...0x950, 0x955...0x963, 0x966...0x97F]
            case .bengali: [0x980...0x9FF]
            case .thai: [0xE01...0xE3A, 0xE40...0xE5B]
            case .georgian: [0x10A0...0x10FF, 0x1C90...0x1CBF, 0x2D00...0x2D2F]
            case .hangul: [0x1100...0x11FF, 0x3131...0x318E, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xD7B0...0xD7FF]
            case .hiragana: [0x3041...0x3096, 0x309D...0x309F]
            // U+30FC (ー, prolonged sound mark) is Common in Unicode but only ever written with kana: counted as Katakana.
            case .katakana: [0x30A1...0x30FA, 0x30FC...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9D]
            case .bopomofo: [0x3105...0x312F, 0x31A0...0x31BF]
            case .han:
                [
                    0x2E80...0x2FDF, 0x3005...0x3005, 0x3007...0x3007, 0x3021...0x3029, 0x3038...0x303B, 0x3400...0x4DBF, 0x4E00...0x9FFF,
                    0xF900...0xFAFF, 0x20000...0x3134F,
                ]
            }
        }

        /// The script of a letter, digit or mark, or nil when it is not in an allowed script (or is Inherited).
        init?(_ scalar: Unicode.Scalar) {
            guard let script = Script.allCases.first(where: { $0.ranges.contains { $0.contains(scalar.value) } }) else { return nil }
            self = script
        }

        /// TS #39 §5.2 "moderately restrictive", made stricter: a single script; or Latin + Han + Hiragana +
        /// Katakana; or Latin + Han + Bopomofo; or Latin + Han + Hangul; or Latin + one other script except Cyrillic,
        /// Greek and Armenian, whose letters imitate Latin ones (TS #39 excepts only the first two).
        static func isAllowedMix(_ scripts: Set<Script>) -> Bool {
            if scripts.count <= 1 || scripts.isSubset(of: [.latin, .han, .hiragana, .katakana]) || scripts.isSubset(of: [.latin, .han, .bopomofo])
                || scripts.isSubset(of: [.latin, .han, .hangul])
            {
                return true
            }
            let others = scripts.subtracting([.latin])
            return scripts.contains(.latin) && others.count == 1 && others.isDisjoint(with: [.cyrillic, .greek, .armenian])
        }

        /// Cyrillic and Greek letters that look like Latin letters in common fonts (from Unicode's confusables.txt).
        static let latinLookalikes: Set<Unicode.Scalar> = Set(
            ("АВЕЅІЈКМНОРСТУХаеѕіјорсуххԁԛԝһӏүҮԌԚԜ" + "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαιονρτυχϲϳ").unicodeScalars
        )
    }
}
