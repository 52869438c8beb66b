import Foundation
import Testing

@testable import BioAuthServer

@Suite("Random bytes and identifiers")
struct RandomSourceTests {
    @Test("gives exactly the bytes asked for, every one of them random", arguments: [0, 1, 7, 8, 9, 31, 32, 33, 64, 255, 256, 257, 600])
    func lengthsAndCoverage(count: Int) {
        let source = SystemRandomSource()
        let draws = (0..<64).map { _ in source.bytes(count) }
        #expect(draws.allSatisfy { $0.count == count })
        guard count > 0 else { return }
        // Every position, the last partial word's included, takes more than one value over 64 draws (a position
        // left unfilled would stay 0). The chance that a random position repeats one value 64 times is 256^-63.
        for position in 0..<count {
            #expect(Set(draws.map { $0[$0.startIndex + position] }).count > 1, "byte \(position) of \(count) never changes")
        }
    }

    @Test("two secrets are never the same")
    func distinct() {
        let source = SystemRandomSource()
        let secrets = Set((0..<1000).map { _ in source.bytes(32) })
        #expect(secrets.count == 1000)
    }

    /// Always the same bytes: 0xFF, to show which bits `newID` sets and clears.
    struct Constant: RandomSource {
        let byte: UInt8
        func bytes(_ count: Int) -> Data { Data(repeating: byte, count: count) }
    }

    @Test("time-ordered identifiers are lowercase version-7 UUIDs: the time first, then the source's bytes; later ones sort later; none repeats")
    func timeOrderedIdentifiers() {
        let date = Date(timeIntervalSince1970: 1_790_000_000.125)  // 0x01A0_C450_6C7D ms
        #expect(Constant(byte: 0xFF).newTimeOrderedID(at: date) == "01a0c450-6c7d-7fff-bfff-ffffffffffff")
        #expect(Constant(byte: 0x00).newTimeOrderedID(at: date) == "01a0c450-6c7d-7000-8000-000000000000")
        let later = SystemRandomSource().newTimeOrderedID(at: date.addingTimeInterval(0.001))
        #expect(later > Constant(byte: 0xFF).newTimeOrderedID(at: date))
        let ids = (0..<1000).map { _ in SystemRandomSource().newTimeOrderedID(at: date) }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { Validation.isIssuedID($0) && $0 == $0.lowercased() && $0.hasPrefix("01a0c450-6c7d-7") })
    }

    @Test("random identifiers are lowercase version-4 UUIDs made from the source's bytes; none repeats")
    func randomIdentifiers() {
        #expect(Constant(byte: 0xFF).newRandomID() == "ffffffff-ffff-4fff-bfff-ffffffffffff")
        #expect(Constant(byte: 0x00).newRandomID() == "00000000-0000-4000-8000-000000000000")
        let ids = (0..<1000).map { _ in SystemRandomSource().newRandomID() }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { Validation.isIssuedID($0) && $0 == $0.lowercased() })
    }
}
