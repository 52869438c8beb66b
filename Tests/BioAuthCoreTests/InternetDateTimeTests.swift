import BioAuthCore
import Foundation
import Testing

@Suite("RFC 3339 date-times on the wire")
struct InternetDateTimeTests {
    let dates = InternetDateTime()

    // Foundation's formatter switches to the Julian calendar before 1582; RFC 3339 is proleptic Gregorian, so the
    // comparison starts in 1583 and earlier dates are checked by round trip and a known value.
    @Test("encodes whole seconds in UTC, exactly as Foundation's ISO 8601 formatter did, across centuries and leap days")
    func encodeMatchesFoundation() throws {
        let formatter = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        let fixed: [TimeInterval] = [
            0, -1, 86_399, 86_400,
            951_782_400,  // 2000-02-29
            4_107_542_399,  // 2100-02-28T23:59:59
            -12_212_553_600,  // 1583-01-01
            253_402_300_799,  // 9999-12-31T23:59:59
        ]
        let random = (0..<2000).map { _ in TimeInterval(Int64.random(in: -12_212_553_600...253_402_300_799, using: &generator)) + 0.75 }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            let text = try dates.encode(date)
            #expect(text == formatter.string(from: date), "\(seconds)")
            #expect(try dates.decode(text) == Date(timeIntervalSince1970: seconds.rounded(.down)))
        }
        #expect(try dates.encode(Date(timeIntervalSince1970: 1_795_336_200.999)) == "2026-11-22T08:30:00Z")
        let first = Date(timeIntervalSince1970: -62_135_596_800)
        #expect(try dates.encode(first) == "0001-01-01T00:00:00Z")
        #expect(try dates.decode("0001-01-01T00:00:00Z") == first)
    }

    @Test("decodes any RFC 3339 date-time: fractions, offsets, lower-case separators")
    func decodeForms() throws {
        let base = Date(timeIntervalSince1970: 1_795_336_200)  // 2026-11-22T08:30:00Z
        #expect(try dates.decode("2026-11-22T08:30:00Z") == base)
        #expect(try dates.decode("2026-11-22t08:30:00z") == base)
        #expect(try dates.decode("2026-11-22T16:30:00+08:00") == base)
        #expect(try dates.decode("2026-11-22T03:00:00-05:30") == base)
        #expect(try dates.decode("2026-11-22T08:30:00.250Z") == base.addingTimeInterval(0.25))
        #expect(try dates.decode("2026-11-22T08:30:00.000001Z").timeIntervalSince(base) > 0)
    }

    @Test(
        "refuses what is not a date-time, without crashing",
        arguments: [
            "", "2026-11-22", "2026-11-22T08:30:00", "2026-11-22 08:30:00Z", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
            "2026-11-31T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T08:60:00Z", "2026-11-22T08:30:00.Z", "2026-11-22T08:30:00+0800",
            "2026-11-22T08:30:00Z ", "２０２６-11-22T08:30:00Z", "+2026-11-22T08:30:00Z", "2026-11-22T08:30:00+08:00:00",
        ]
    )
    func refuses(text: String) {
        #expect(throws: DecodingError.self) { try dates.decode(text) }
    }

    @Test("refuses to encode a year outside 0001–9999")
    func encodeRange() {
        #expect(throws: EncodingError.self) { try dates.encode(Date(timeIntervalSince1970: 253_402_300_800)) }
        #expect(throws: EncodingError.self) { try dates.encode(Date(timeIntervalSince1970: -62_135_596_801)) }
    }
}
