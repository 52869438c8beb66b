import Foundation

extension DisplayName {
    /// What a person sees of a name, as two keys: two names with an equal key look alike, so a registry of names a prompt
    /// shows keeps each key unique.
    ///
    /// With `skeleton` Unicode TS #39's confusable skeleton (NFD, each code point replaced by its prototype from Unicode's
    /// confusables.txt, NFD again) and `fold` Unicode's full case folding followed by lowercasing:
    /// - ``foldedFirst`` is `skeleton(fold(skeleton(fold(name))))`: equal for names that differ in case and in look-alike
    ///   characters ("Coffee Shop", "COFFEE SHOP", "C0ffee Shop"; the second round folds what the first mapped to a
    ///   capital, `0` → `O`).
    /// - ``mappedFirst`` is `skeleton(fold(skeleton(name)))`: equal for names whose letters look alike as written before
    ///   case is set aside ("Ilya" and "llya", "PayPal" and "PayPaI": a capital I maps to a small l, which folding first
    ///   would have made a small i).
    public struct LookalikeKeys: Sendable, Equatable {
        /// Folded, then mapped (twice).
        public let foldedFirst: String
        /// Mapped, then folded and mapped.
        public let mappedFirst: String
    }

    /// The keys of `name` (any normalization form: the keys of a name and of its NFC and NFD forms are the same).
    public static func lookalikeKeys(_ name: String) -> LookalikeKeys {
        LookalikeKeys(foldedFirst: skeleton(fold(skeleton(fold(name)))), mappedFirst: skeleton(fold(skeleton(name))))
    }

    /// Unicode TS #39's skeleton: `name` in NFD, each code point replaced by its confusables.txt prototype, in NFD again.
    public static func skeleton(_ name: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in name.decomposedStringWithCanonicalMapping.unicodeScalars {
            if let prototype = confusables[scalar.value] {
                mapped.append(contentsOf: prototype)
            } else {
                mapped.append(scalar)
            }
        }
        return String(mapped).decomposedStringWithCanonicalMapping
    }

    /// Unicode's full case folding (`ß` → `ss`, `ς` → `σ`), whatever the locale, then lowercased: Foundation's folding
    /// data can be older than the standard library's case mappings (`ƛ` U+019B and its capital `꟝` U+A7DC, new in
    /// Unicode 16, fold apart but lowercase alike), and a capital the folding does not know must not make a second name.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive], locale: nil).lowercased()
    }

    /// Every code point the confusable mappings replace (for tests that compare the mappings with another implementation).
    public static var confusablesSources: [UInt32] { confusables.keys.sorted() }

    /// ``confusablesData`` read once: code point → prototype.
    static let confusables: [UInt32: [Unicode.Scalar]] = {
        var table: [UInt32: [Unicode.Scalar]] = [:]
        for line in confusablesData.split(separator: "\n") {
            let fields = line.split(separator: " ").compactMap { UInt32($0, radix: 16) }
            guard let source = fields.first else { continue }
            table[source] = fields.dropFirst().compactMap(Unicode.Scalar.init)
        }
        return table
    }()
}
