/// An ISO 4217 currency with the number of digits of its minor unit.
///
/// Amounts in BioAuth are always integers in minor units (fen, cents, yen); the exponent says where the
/// decimal point goes when an amount is shown. Only codes in the active ISO 4217 list with a defined minor
/// unit are accepted, so a typo such as `"CYN"` is refused instead of being shown to the user.
public struct Currency: Hashable, Sendable, CustomStringConvertible {
    /// The three-letter alphabetic code, e.g. `"CNY"`.
    public let code: String
    /// The number of decimal digits of the minor unit: 2 for CNY, 0 for JPY, 3 for KWD.
    public let minorUnitExponent: Int

    /// Looks up an active ISO 4217 code. Returns `nil` for an unknown or malformed code.
    ///
    /// The code must be exactly three uppercase ASCII letters; `"cny"` is not accepted, so that one payment
    /// has one canonical encoding.
    public init?(code: String) {
        guard code.utf8.count == 3, code.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }),
            let exponent = ISO4217.minorUnitExponents[code]
        else { return nil }
        self.code = code
        self.minorUnitExponent = exponent
    }

    public var description: String { code }

    /// Chinese yuan renminbi.
    public static let cny = Currency(code: "CNY")!
    /// US dollar.
    public static let usd = Currency(code: "USD")!
    /// Euro.
    public static let eur = Currency(code: "EUR")!
    /// Japanese yen (no minor unit).
    public static let jpy = Currency(code: "JPY")!
    /// Hong Kong dollar.
    public static let hkd = Currency(code: "HKD")!

    /// Every currency this build knows, sorted by code.
    public static var all: [Currency] {
        ISO4217.minorUnitExponents.keys.sorted().compactMap { Currency(code: $0) }
    }
}
