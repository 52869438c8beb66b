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

    @Test("an amount written in major units reads back as the exact minor units, and what decimalString writes reads back the same")
    func parsing() throws {
        #expect(Money(decimalString: "88", currency: .cny) == Money(minorUnits: 8800, currency: .cny))
        #expect(Money(decimalString: "88.5", currency: .cny) == Money(minorUnits: 8850, currency: .cny))
        #expect(Money(decimalString: "0.01", currency: .cny) == Money(minorUnits: 1, currency: .cny))
        #expect(Money(decimalString: "500", currency: .jpy) == Money(minorUnits: 500, currency: .jpy))
        let kwd = try #require(Currency(code: "KWD"))
        #expect(Money(decimalString: "1.250", currency: kwd) == Money(minorUnits: 1250, currency: kwd))
        for refused in ["", ".", "88.", ".5", "88.505", "-1", "+1", "1,000", "1e3", " 1", "８８", "92233720368547758.08", "99999999999999999999"] {
            #expect(Money(decimalString: refused, currency: .cny) == nil, "\(refused)")
        }
        #expect(Money(decimalString: "1.5", currency: .jpy) == nil, "no minor unit")
        #expect(Money(decimalString: "92233720368547758.07", currency: .cny)?.minorUnits == Int64.max)
        for minor: Int64 in [0, 1, 99, 100, 8800, 123_456_789, Int64.max] {
            for currency in [Currency.cny, .jpy, kwd] {
                let money = Money(minorUnits: minor, currency: currency)
                #expect(Money(decimalString: money.decimalString, currency: currency) == money)
            }
        }
    }
}
