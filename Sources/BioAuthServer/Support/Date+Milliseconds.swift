import Foundation

extension Date {
    /// Milliseconds since 1970, the database's time representation (an integer on every SQL dialect).
    var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The date `milliseconds` after 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}
