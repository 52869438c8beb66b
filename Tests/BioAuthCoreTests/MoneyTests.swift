import BioAuthCore
import Testing

@Suite("Money and currencies")
struct MoneyTests {
    @Test(
        "decimal strings come from integer minor units",
        arguments: [
            (Int64(8800), "CNY", "88.00"), (5, "CNY", "0.05"), (0, "CNY", "0.00"), (-5, "USD", "-0.05"),
            (500, "JPY", "500"), (1250, "KWD", "1.250"), (1, "CLF", "0.0001"), (123_456_789, "EUR", "1234567.89"),
            (Int64.max, "CNY", "92233720368547758.07"), (Int64.min, "CNY", "-92233720368547758.08"),
        ]
    )
    func decimalString(minorUnits: Int64, code: String, expected: String) throws {
        let money = Money(minorUnits: minorUnits, currency: try #require(Currency(code: code)))
        #expect(money.decimalString == expected)
        #expect(money.description == "\(code) \(expected)")
    }

    @Test("ISO 4217 minor-unit exponents", arguments: [("CNY", 2), ("JPY", 0), ("KRW", 0), ("KWD", 3), ("CLF", 4), ("USD", 2)])
    func exponents(code: String, exponent: Int) throws {
        #expect(try #require(Currency(code: code)).minorUnitExponent == exponent)
    }

    @Test(
        "malformed, unknown, withdrawn and minor-unit-less codes are refused",
        arguments: ["", "cny", "Cny", "CN", "CNYY", "CYN", " CNY", "XAU", "XXX", "XTS", "HRK", "ZWL", "ÇNY", "C1Y"]
    )
    func refused(code: String) {
        #expect(Currency(code: code) == nil)
    }

    @Test("the table lists every active currency once, sorted")
    func table() {
        let codes = Currency.all.map(\.code)
        #expect(codes.count == 165)
        #expect(codes == codes.sorted())
        #expect(codes.contains("CNY") && codes.contains("HKD") && codes.contains("XCG"))
    }
}
