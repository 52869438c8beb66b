import Foundation

/// How the console writes times: in the deployment's time zone (``ServerConfiguration/consoleTimeZone``), to the
/// second, and for the last and next 24 hours also how long ago or ahead, in the page's language ("3 min ago",
/// "3 分钟前").
struct ConsoleTime: Sendable {
    let timeZone: TimeZone
    let language: ConsoleLanguage
    let now: Date

    /// The zone named `identifier` (validated at start-up; UTC if it is not known).
    init(timeZone identifier: String, language: ConsoleLanguage, now: Date) {
        self.timeZone = TimeZone(identifier: identifier) ?? TimeZone(identifier: "UTC") ?? .current
        self.language = language
        self.now = now
    }

    /// `2026-11-24 18:03:12`, with how long ago (or ahead) when within a day (`(3 min ago)`, `（3 分钟前）`); `–` for none.
    func format(_ date: Date?) -> String {
        guard let date else { return "–" }
        let absolute = formatted(date, "yyyy-MM-dd HH:mm:ss")
        guard let relative = relative(date) else { return absolute }
        return language == .english ? "\(absolute) (\(relative))" : "\(absolute)（\(relative)）"
    }

    /// `18:00`: the start of an hour of the overview's chart.
    func hour(_ date: Date) -> String { formatted(date, "HH:mm") }

    /// The zone as the pages name it: `Asia/Shanghai (UTC+08:00)`.
    var zoneName: String {
        let seconds = timeZone.secondsFromGMT(for: now)
        let sign = seconds < 0 ? "-" : "+"
        let minutes = abs(seconds) / 60
        return "\(timeZone.identifier) (UTC\(sign)\(String(format: "%02d:%02d", minutes / 60, minutes % 60)))"
    }

    /// "3 min ago", "in 5 min", "just now"; nil beyond a day either way.
    func relative(_ date: Date) -> String? {
        let seconds = Int(now.timeIntervalSince(date).rounded())
        let magnitude = abs(seconds)
        guard magnitude < 86_400 else { return nil }
        if magnitude < 60 { return language["time.justNow"] }
        let (count, unit) = magnitude < 3600 ? (magnitude / 60, "min") : (magnitude / 3600, "hours")
        let key = "time.\(unit).\(seconds >= 0 ? "ago" : "ahead")"
        return language[key].replacingOccurrences(of: "%d", with: String(count))
    }

    private func formatted(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}
