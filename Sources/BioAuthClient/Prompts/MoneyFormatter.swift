import BioAuthCore

/// Formats an integer amount in minor units for display: `¥88.00`, `US$1,234.56`, `JP¥500`, `KWD 1.250`.
///
/// Integer arithmetic only (through `Money.decimalString`) and a fixed symbol table, so every
/// platform shows the same characters for the same amount: the text the user approves in a payment prompt
/// does not depend on the ICU version of the device.
enum MoneyFormatter {
    /// Symbols per language for the currencies a Chinese payment app shows most; any other currency is shown
    /// with its ISO code. CNY is the home currency, so it keeps the plain `¥` in both languages and JPY is
    /// always `JP¥`.
    private static let symbols: [String: [String: String]] = [
        Language.english.identifier: [
            "CNY": "¥", "USD": "$", "EUR": "€", "GBP": "£", "JPY": "JP¥", "HKD": "HK$", "MOP": "MOP$",
            "TWD": "NT$", "KRW": "₩", "SGD": "S$", "AUD": "A$", "CAD": "CA$",
        ],
        Language.simplifiedChinese.identifier: [
            "CNY": "¥", "USD": "US$", "EUR": "€", "GBP": "£", "JPY": "JP¥", "HKD": "HK$", "MOP": "MOP$",
            "TWD": "NT$", "KRW": "₩", "SGD": "S$", "AUD": "A$", "CAD": "CA$",
        ],
    ]

    static func format(_ money: Money, language: Language) -> String {
        let plain = money.decimalString
        let negative = plain.hasPrefix("-")
        let unsigned = negative ? String(plain.dropFirst()) : plain
        let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var text = grouped(String(parts[0]))
        if parts.count == 2 { text += "." + parts[1] }
        let sign = negative ? "-" : ""
        if let symbol = symbols[language.identifier]?[money.currency.code] {
            return sign + symbol + text
        }
        return sign + money.currency.code + "\u{00A0}" + text
    }

    /// `"1234567"` → `"1,234,567"`.
    private static func grouped(_ digits: String) -> String {
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}
