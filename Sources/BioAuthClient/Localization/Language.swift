/// A language BioAuth's user-facing text is written in.
public struct Language: Hashable, Sendable, CustomStringConvertible {
    /// The BCP 47 identifier of the resources: `"en"` or `"zh-Hans"`.
    public let identifier: String

    private init(identifier: String) { self.identifier = identifier }

    /// English.
    public static let english = Language(identifier: "en")
    /// Simplified Chinese (简体中文).
    public static let simplifiedChinese = Language(identifier: "zh-Hans")

    /// Every language the resources exist in.
    public static let all: [Language] = [.english, .simplifiedChinese]

    /// Matches a locale or language identifier such as `"en-GB"`, `"zh-Hans-CN"`, `"zh_CN"` or `"zh-SG"`.
    /// Traditional Chinese (`"zh-Hant"`, `"zh-TW"`, `"zh-HK"`) and other languages return `nil`.
    public init?(matching identifier: String) {
        let parts = identifier.replacingOccurrences(of: "_", with: "-").lowercased().split(separator: "-")
        guard let first = parts.first else { return nil }
        switch first {
        case "en":
            self = .english
        case "zh":
            let rest = Set(parts.dropFirst())
            if rest.contains("hant") || (!rest.contains("hans") && !rest.isDisjoint(with: ["tw", "hk", "mo"])) {
                return nil
            }
            self = .simplifiedChinese
        default:
            return nil
        }
    }

    /// The first of the user's preferred languages that BioAuth has text for, else English.
    /// Pass `Locale.preferredLanguages`.
    public static func preferred(from identifiers: [String]) -> Language {
        identifiers.lazy.compactMap(Language.init(matching:)).first ?? .english
    }

    public var description: String { identifier }
}
