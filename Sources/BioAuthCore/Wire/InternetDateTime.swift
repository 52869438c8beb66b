import Foundation

/// RFC 3339 date-times as BioAuth's API carries them (`2026-11-22T08:30:00Z`), converted with integer
/// arithmetic instead of a locale-aware date formatter (on Linux that formatter was a tenth of a sign-in's
/// CPU time).
///
/// Encoding writes whole seconds in UTC, as the API always has. Decoding accepts any RFC 3339 date-time:
/// fractional seconds (kept to the microsecond) and a `Z` or `±hh:mm` offset.
public struct InternetDateTime: Sendable {
    /// The converter (it has no settings).
    public init() {}

    /// The date as `yyyy-MM-ddTHH:mm:ssZ` (UTC, seconds rounded down). Years outside 0001–9999 are refused.
    public func encode(_ date: Date) throws -> String {
        let seconds = Int64((date.timeIntervalSince1970).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = Self.civil(fromDays: days)
        guard (1...9999).contains(year) else {
            throw EncodingError.invalidValue(date, .init(codingPath: [], debugDescription: "\(date) is outside years 1–9999."))
        }
        var text = [UInt8]()
        text.reserveCapacity(20)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(truncatingIfNeeded: 0x30 + value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        text.append(0x2D)
        digits(month, 2)
        text.append(0x2D)
        digits(day, 2)
        text.append(0x54)
        digits(time / 3600, 2)
        text.append(0x3A)
        digits(time / 60 % 60, 2)
        text.append(0x3A)
        digits(time % 60, 2)
        text.append(0x5A)
        return String(decoding: text, as: UTF8.self)
    }

    /// The date an RFC 3339 date-time names; throws `DecodingError.dataCorrupted` for anything else.
    public func decode(_ string: String) throws -> Date {
        guard let date = Self.parse(Array(string.utf8)) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "\(string.prefix(64).debugDescription) is not an RFC 3339 date-time.")
            )
        }
        return date
    }

    private static func parse(_ text: [UInt8]) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= text.count else { return nil }
            var value: Int64 = 0
            for byte in text[index..<index + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ bytes: UInt8...) -> Bool {
            guard index < text.count, bytes.contains(text[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
            expect(0x54, 0x74), let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A), let second = number(2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if index < text.count, text[index] == 0x2E {
            index += 1
            var scale = 0.1
            let start = index
            while index < text.count, (0x30...0x39).contains(text[index]) {
                fraction += Double(text[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset: Int64 = 0
        if expect(0x5A, 0x7A) {
        } else if index < text.count, text[index] == 0x2B || text[index] == 0x2D {
            let sign: Int64 = text[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = number(2), expect(0x3A), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == text.count else { return nil }
        let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        let microseconds = (fraction * 1_000_000).rounded(.down) / 1_000_000
        return Date(timeIntervalSince1970: Double(seconds) + microseconds)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
