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

    /// `"CNY 88.00"`: unambiguous, for logs and diagnostics (never localized).
    public var description: String { "\(currency.code) \(decimalString)" }
}
