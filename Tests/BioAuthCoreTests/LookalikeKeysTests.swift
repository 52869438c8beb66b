import Foundation
import TestTools
import Testing

@testable import BioAuthCore

/// The look-alike keys a payee registry keeps unique, checked against ICU's own TS #39 skeleton and case folding (an
/// independent implementation: scripts/confusables/icu-skeleton.c, built here against the system's ICU).
@Suite("Look-alike keys: names that look alike have equal keys")
struct LookalikeKeysTests {
    @Test(
        "names that differ in case or in look-alike characters share a key",
        arguments: [
            ("Coffee Shop", "coffee shop"), ("Coffee Shop", "COFFEE SHOP"), ("Coffee Shop", "C0ffee Shop"), ("Coffee Shop", "Coffee Sh0p"),
            ("Alipay", "AIipay"), ("Ilya Store", "llya Store"), ("Paypal", "PayPaI"), ("Straße", "STRASSE"), ("modern", "rnodern"),
            ("Café", "Cafe\u{0301}"), ("Кофейня", "КОФЕЙНЯ"),
            // Found by the fuzzer: a capital newer than Foundation's folding data (U+A7DC, Unicode 16) and its small letter.
            ("\u{019B} Shop", "\u{019B}".uppercased() + " Shop"),
        ]
    )
    func alike(_ first: String, _ second: String) {
        let (a, b) = (DisplayName.lookalikeKeys(first), DisplayName.lookalikeKeys(second))
        #expect(a.foldedFirst == b.foldedFirst || a.mappedFirst == b.mappedFirst, "\(a) \(b)")
    }

    @Test("names a person tells apart keep apart keys", arguments: [("Coffee Shop", "Coffee Shops"), ("Café", "Cafe"), ("Alipay", "Alipal")])
    func apart(_ first: String, _ second: String) {
        let (a, b) = (DisplayName.lookalikeKeys(first), DisplayName.lookalikeKeys(second))
        #expect(a.foldedFirst != b.foldedFirst && a.mappedFirst != b.mappedFirst, "\(a) \(b)")
    }

    /// The ICU helper, built once per run; nil where there is no C compiler or no ICU headers (CI installs both).
    static let icu: URL? = {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/confusables/icu-skeleton.c")
        let binary = FileManager.default.temporaryDirectory.appendingPathComponent("icu-skeleton-\(UUID().uuidString)")
        guard FileManager.default.fileExists(atPath: "/usr/include/unicode/uspoof.h") else { return nil }
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["cc", source.path, "-licui18n", "-licuuc", "-o", binary.path]
        guard (try? build.run()) != nil else { return nil }
        build.waitUntilExit()
        return build.terminationStatus == 0 ? binary : nil
    }()

    /// ICU's keys of each line of `names`.
    static func icuKeys(_ names: [String], tool: URL) throws -> [DisplayName.LookalikeKeys] {
        let process = Process()
        process.executableURL = tool
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(names.map { $0 + "\n" }.joined().utf8))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            return DisplayName.LookalikeKeys(foldedFirst: String(fields[0]), mappedFirst: String(fields.count > 1 ? fields[1] : ""))
        }
    }

    @Test(
        "BioAuth's keys equal ICU's: every mapped code point alone, in upper and lower case, and generated names",
        .enabled(if: TestTool.ready(.icu), Comment(rawValue: TestTool.missing(.icu)))
    )
    func sameAsICU() throws {
        let tool = try #require(Self.icu, "\(TestTool.missing(.icu))")
        // Every code point the table maps, alone and between letters; then names of letters, digits, marks and the
        // confusable characters of the scripts names are written in, from a fixed seed.
        var names: [String] = []
        for value in DisplayName.confusablesSources {
            // What a name can hold: letters of the allowed scripts, marks, digits and the allowed punctuation (ICU and
            // Foundation fold letters of scripts names may not use differently: Cherokee's folds to capitals in ICU).
            guard let scalar = Unicode.Scalar(value),
                DisplayName.Script(scalar) != nil || DisplayName.punctuation.contains(scalar)
                    || [.nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber].contains(scalar.properties.generalCategory)
            else { continue }
            names.append(String(scalar))
            names.append("a\(scalar)B")
        }
        let pool =
            Array("aAbBcCeEiIlLoOmMnNrRsSßſıİjȷ01٠١Кк" + "СсОоРрΑαΟοΣσςΙι" + "éèëäö星巴克スタ").map(String.init)
            + ["\u{0301}", "\u{0308}", "\u{0307}", "\u{0323}"]
        var generator = SplitMix(seed: 39)
        for _ in 0..<4000 {
            names.append((0..<Int(generator.next() % 8 + 1)).map { _ in pool[Int(generator.next() % UInt64(pool.count))] }.joined())
        }
        let expected = try Self.icuKeys(names, tool: tool)
        try #require(expected.count == names.count)
        var differences: [String] = []
        for (name, icu) in zip(names, expected) where DisplayName.lookalikeKeys(name) != icu {
            differences.append("\(name.unicodeScalars.map { String($0.value, radix: 16) }): \(DisplayName.lookalikeKeys(name)) vs ICU \(icu)")
        }
        #expect(differences.isEmpty, "\(differences.count) differ, e.g. \(differences.prefix(10))")
    }

    /// A small deterministic generator (SplitMix64).
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
