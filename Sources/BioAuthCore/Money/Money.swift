/// An amount of money: an integer number of minor units of one currency.
///
/// There is deliberately no initializer from `Double` or `Decimal`: what the user approves and what the
/// device signs must be the exact integer the server stored (PSD2 dynamic linking).
public struct Money: Hashable, Sendable, CustomStringConvertible {
    /// The amount in minor units: 8800 for ¥88.00, 500 for ¥500 (JPY has no minor unit).
    public let minorUnits: Int64
    /// The currency the amount is in.
    public let currency: Currency

    /// An amount in minor units of `currency`.
    public init(minorUnits: Int64, currency: Currency) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// The amount with its decimal point and no grouping, e.g. `"88.00"`, `"500"`, `"-0.05"`, `"1.250"`.
    ///
    /// Computed with integer arithmetic only, so every value of `minorUnits` (including `Int64.min`) is exact.
    public var decimalString: String {
        let exponent = currency.minorUnitExponent
        let digits = String(minorUnits.magnitude)
        let sign = minorUnits < 0 ? "-" : ""
        guard exponent > 0 else { return sign + digits }
        let padded = String(repeating: "0", count: max(0, exponent + 1 - digits.count)) + digits
        let split = padded.index(padded.endIndex, offsetBy: -exponent)
        return sign + padded[..<split] + "." + padded[split...]
    }

    /// The amount a person wrote in major units, as ``decimalString`` writes it: `"88"`, `"88.5"` or `"88.50"` for
    /// ¥88.50; no sign, no grouping, at most the currency's decimals (`"88.505"` and `"1.5"` in JPY are nil), and nil
    /// beyond what `Int64` minor units hold. Parsed with integer arithmetic, so nothing is rounded.
    public init?(decimalString text: String, currency: Currency) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        let exponent = currency.minorUnitExponent
        guard !whole.isEmpty, whole.utf8.count <= 19, whole.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            fraction.utf8.allSatisfy({ (0x30...0x39).contains($0) }), fraction.count <= exponent, parts.count == 1 || !fraction.isEmpty
        else { return nil }
        var minor = Int64(0)
        for digit in (whole + fraction + String(repeating: "0", count: exponent - fraction.count)).utf8 {
            let (shifted, overflow) = minor.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = shifted.addingReportingOverflow(Int64(digit - 0x30))
            guard !overflow, !overflow2 else { return nil }
            minor = added
        }
        self.init(minorUnits: minor, currency: currency)
    }

    /// `"CNY 88.00"`: unambiguous, for logs and diagnostics (never localized).
    public var description: String { "\(currency.code) \(decimalString)" }
}
