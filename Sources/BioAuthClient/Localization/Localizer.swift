import BioAuthCore
import Foundation

/// Reads the module's `Localizable.strings` for one language.
///
/// Each language's bundle is opened once. The `.lproj` folder is found case-insensitively because SwiftPM
/// writes `zh-hans.lproj` on some platforms and `zh-Hans.lproj` on others.
enum Localizer {
    /// The folder of the module's resources: the `.lproj` tables and `PrivacyInfo.xcprivacy`.
    static let resourceRoot = Bundle.module.resourceURL ?? Bundle.module.bundleURL

    private static let bundles: [String: Bundle] = {
        let root = resourceRoot
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        var bundles: [String: Bundle] = [:]
        for language in Language.all {
            let folder = language.identifier.lowercased() + ".lproj"
            if let name = names.first(where: { $0.lowercased() == folder }),
                let bundle = Bundle(url: root.appendingPathComponent(name))
            {
                bundles[language.identifier] = bundle
            }
        }
        return bundles
    }()

    /// The text for `key` in `language`, with positional `%1$@`-style arguments filled in. A missing key
    /// returns the key itself (a test checks that none is missing).
    static func string(_ key: String, language: Language, arguments: [String] = []) -> String {
        let format = template(key, language: language) ?? key
        guard !arguments.isEmpty else { return format }
        return String(format: format, arguments: arguments.map { $0 as any CVarArg })
    }

    /// Every key and template of `language`'s table, as shipped in the bundle (for tests and tools).
    static func table(_ language: Language) -> [String: String] {
        guard let url = bundles[language.identifier]?.url(forResource: "Localizable", withExtension: "strings"),
            let data = try? Data(contentsOf: url),
            let table = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: String]
        else { return [:] }
        return table
    }

    /// The text for `key` naming the sensor; when `signedIn`, the `<key>.signedIn` variant where the table has one
    /// (a signed-in customer who pays or approves is never told to sign in with the password).
    static func string(_ key: String, language: Language, biometry: BiometryKind, signedIn: Bool) -> String {
        let chosen = signedIn && template(key + ".signedIn", language: language) != nil ? key + ".signedIn" : key
        return string(chosen, language: language, arguments: [BiometryName.name(of: biometry, in: language)])
    }

    /// The raw template for `key`, or `nil` when the language's table lacks it.
    static func template(_ key: String, language: Language) -> String? {
        let missing = "\u{0}missing"
        let value = bundles[language.identifier]?.localizedString(forKey: key, value: missing, table: "Localizable")
        return value == missing ? nil : value
    }
}

/// The user-facing name of a sensor.
enum BiometryName {
    static func name(of kind: BiometryKind, in language: Language) -> String {
        Localizer.string("biometry.\(kind.rawValue)", language: language)
    }
}
