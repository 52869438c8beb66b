import Foundation
import SQLKit
import SQLiteKit
import Testing

@testable import BioAuthServer

/// The direct conversions between Swift values and SQLite's, which skip SQLiteKit's Codable encoder and
/// decoder for the types BioAuth uses, must agree with them exactly — including refusing what they refuse.
@Suite("SQLite values")
struct SQLiteValueTests {
    @Test("bound values are stored as SQLiteKit's encoder stores them")
    func binds() throws {
        let values: [any Encodable & Sendable] = [
            "text", "", Int64(-7), Int64.max, 42, String?.some("x"), String?.none, Int64?.some(3), Int64?.none, true, 1.5,
        ]
        for value in values {
            #expect(try SQLiteUnitDatabase.sqliteValue(value) == SQLiteDataEncoder().encode(value), "\(value)")
        }
    }

    @Test("columns are read as SQLiteKit's decoder reads them, and mismatches are refused the same way")
    func decoding() throws {
        #expect(try SQLiteResultRow.decode(.text("a"), as: String.self) == "a")
        #expect(try SQLiteResultRow.decode(.text("a"), as: String?.self) == "a")
        #expect(try SQLiteResultRow.decode(.null, as: String?.self) == nil)
        #expect(try SQLiteResultRow.decode(.integer(9), as: Int64.self) == 9)
        #expect(try SQLiteResultRow.decode(.integer(9), as: Int.self) == 9)
        #expect(try SQLiteResultRow.decode(.integer(9), as: Int64?.self) == 9)
        #expect(try SQLiteResultRow.decode(.null, as: Int64?.self) == nil)
        // Not one of the direct cases: SQLiteKit's decoder answers.
        #expect(try SQLiteResultRow.decode(.integer(1), as: Bool.self) == (try SQLiteDataDecoder().decode(Bool.self, from: .integer(1))))
        // Mismatches throw, as they did through the decoder.
        #expect(throws: (any Error).self) { try SQLiteResultRow.decode(.null, as: String.self) }
        #expect(throws: (any Error).self) { try SQLiteResultRow.decode(.null, as: Int64.self) }
        #expect(throws: (any Error).self) { try SQLiteResultRow.decode(.text("9"), as: Int64.self) }
    }
}
