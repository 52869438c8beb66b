import BioAuthCore
import Testing

@Suite("Display names: a name shown in a prompt cannot imitate another")
struct DisplayNameTests {
    static func check(_ name: String) -> Result<String, DisplayName.Refusal> { DisplayName.checked(name, maxCharacters: 64) }

    @Test(
        "names a bank's payees and customers' phones really have are accepted",
        arguments: [
            "Coffee Shop", "McDonald's", "7-Eleven", "Ben & Jerry's", "AT&T Store #42", "Café Zoë", "Alice’s iPhone", "iPhone (2)",
            "星巴克咖啡", "星巴克 Starbucks", "王小明的iPhone", "東京の本屋", "スターバックス コーヒー", "スターバックス・コーヒー", "스타벅스 커피",
            "Al Noor تجارة", "مقهى النور", "שוק הכרמל", "Кофейня Пушкин", "Καφέ Αθήνα", "ร้านกาแฟ", "चाय की दुकान", "肯德基（国贸店）",
            "Shop 24", "مقهى ٢٤",
        ]
    )
    func accepted(_ name: String) throws {
        let checked = try Self.check(name).get()
        #expect(checked == name.precomposedStringWithCanonicalMapping)
    }

    @Test("a name is returned in NFC: the form stored, shown and signed")
    func normalized() throws {
        let decomposed = "Cafe\u{0301}"
        let checked = try Self.check(decomposed).get()
        #expect(Array(checked.unicodeScalars) == Array("Caf\u{00E9}".unicodeScalars))
    }

    struct Attack: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        var testDescription: String { name }
    }

    // The outside attack run's payee names, and their relatives.
    static let attacks: [Attack] = [
        Attack(name: "no-break space U+00A0", text: "Coffee\u{00A0}Shop"),
        Attack(name: "en quad U+2000", text: "Coffee\u{2000}Shop"),
        Attack(name: "hair space U+200A", text: "Coffee\u{200A}Shop"),
        Attack(name: "narrow no-break space U+202F", text: "Coffee\u{202F}Shop"),
        Attack(name: "ideographic space U+3000", text: "Coffee\u{3000}Shop"),
        Attack(name: "Hangul filler U+3164", text: "Coffee Shop\u{3164}"),
        Attack(name: "Hangul choseong filler U+115F", text: "\u{115F}Coffee Shop"),
        Attack(name: "combining grapheme joiner U+034F", text: "Coffee\u{034F} Shop"),
        Attack(name: "zero-width space U+200B", text: "Coffee\u{200B}Shop"),
        Attack(name: "zero-width joiner U+200D", text: "Coffee\u{200D}Shop"),
        Attack(name: "variation selector", text: "Coffee\u{FE0F} Shop"),
        Attack(name: "bidi override", text: "Shop\u{202E}"),
        Attack(name: "leading space", text: " Coffee Shop"),
        Attack(name: "trailing space", text: "Coffee Shop "),
        Attack(name: "two inner spaces", text: "Coffee  Shop"),
        Attack(name: "tab", text: "Coffee\tShop"),
        Attack(name: "Cyrillic С in a Latin name", text: "Соffee Shop"),
        Attack(name: "Greek ο in a Latin name", text: "Cοffee Shop"),
        Attack(name: "Armenian օ in a Latin name", text: "Cօffee Shop"),
        Attack(name: "all-Cyrillic look-alike", text: "Сое"),
        Attack(name: "all-Greek look-alike", text: "ΤΟΡ"),
        Attack(name: "fullwidth Latin", text: "Ｃoffee Shop"),
        Attack(name: "mathematical bold letters", text: "𝐂offee Shop"),
        Attack(name: "mixed digit systems", text: "Shop 2٤"),
        Attack(name: "fullwidth digits", text: "Shop ２４"),
        Attack(name: "emoji", text: "Coffee ☕"),
        Attack(name: "a mark on a space", text: "Coffee \u{0301}Shop"),
        Attack(name: "a mark first", text: "\u{0301}Coffee"),
        Attack(name: "three marks on one letter", text: "Cof\u{0300}\u{0301}\u{0302}fee"),
        Attack(name: "the same mark twice", text: "Cof\u{0301}\u{0301}fee"),
        Attack(name: "Cyrillic and Arabic", text: "Кофе مقهى"),
        // Marks are counted on the decomposed form: NFC had folded the first mark into a precomposed letter.
        Attack(name: "a precomposed é and its acute again", text: "Cafe\u{0301}\u{0301}"),
        Attack(name: "a precomposed ä and its diaeresis again", text: "Bä\u{0308}r"),
        Attack(name: "a precomposed é and two more marks", text: "Café\u{0302}\u{0303}"),
        Attack(name: "dotless i with a dot above (reads Alipay)", text: "Alı\u{0307}pay"),
        Attack(name: "dotless j with a dot above", text: "ȷ\u{0307}ava Shop"),
        Attack(name: "dotless i with a dot below and a dot above", text: "Alı\u{0323}\u{0307}pay"),
        Attack(name: "private use", text: "Coffee \u{E000}"),
        Attack(name: "empty", text: ""),
        Attack(name: "too long", text: String(repeating: "a", count: 65)),
    ]

    @Test("each look-alike is refused with a reason that does not echo the name", arguments: attacks)
    func refused(_ attack: Attack) {
        switch Self.check(attack.text) {
        case .success: Issue.record("\(attack.name) was accepted")
        case .failure(let refusal):
            if !attack.text.isEmpty, attack.text.count < 65 {
                #expect(!refusal.description.contains(attack.text), "\(refusal)")
            }
        }
    }

    @Test("a phone's own name is fitted to the rule instead of failing registration")
    func fitted() {
        #expect(DisplayName.fitted("Alice’s iPhone 🍎", maxCharacters: 64, fallback: "iPhone") == "Alice’s iPhone")
        #expect(DisplayName.fitted("  Bob\u{00A0}\u{00A0}Phone\u{200B}  ", maxCharacters: 64, fallback: "iPhone") == "Bob Phone")
        #expect(DisplayName.fitted("🍎📱", maxCharacters: 64, fallback: "iPhone") == "iPhone")
        #expect(DisplayName.fitted("Соffee", maxCharacters: 64, fallback: "iPhone") == "iPhone")
        #expect(DisplayName.fitted(String(repeating: "ab ", count: 40), maxCharacters: 64, fallback: "iPhone").count <= 64)
    }
}
