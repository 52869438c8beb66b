import Foundation
import TestTools
import Testing

@testable import BioAuthServer

/// The console's QR encoder, proven against an independent decoder: each code's SVG is rendered to a PNG by librsvg
/// (`rsvg-convert`) and read back by ZBar (`zbarimg`), Debian's `librsvg2-bin` and `zbar-tools` (CI installs both).
@Suite("QR codes")
struct QRCodeTests {
    /// Where the two tools are; nil when one is missing.
    static let tools: (render: String, decode: String)? = {
        let paths = ["/usr/bin/rsvg-convert", "/usr/bin/zbarimg"]
        guard paths.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        return (paths[0], paths[1])
    }()

    /// What ZBar reads from `code`'s SVG.
    static func decode(_ code: QRCode) throws -> String {
        let tools = try #require(Self.tools, "\(TestTool.missing(.librsvg, .zbar))")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = folder.appendingPathComponent("code.svg")
        let png = folder.appendingPathComponent("code.png")
        try Data(code.svg(pixelsPerModule: 4, label: "test").utf8).write(to: svg)
        try run(tools.render, ["-o", png.path, svg.path])
        return try run(tools.decode, ["--raw", "-q", "-Sbinary", png.path])
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(tool) \(arguments) exited \(process.terminationStatus)")
        return String(decoding: data, as: UTF8.self)
    }

    @Test("the block table agrees with each version's geometry", arguments: 1...15)
    func geometry(version: Int) {
        #expect(
            QRCode.dataCapacity(version: version) + QRCode.errorCorrectionCodewords(version: version) == QRCode.totalCodewords(version: version)
        )
    }

    @Test("Reed-Solomon: published worked examples at 1-M")
    func reedSolomon() {
        // ISO/IEC 18004's annex example ("01234567") and the "HELLO WORLD" of the common tutorials: the 16 data codewords
        // and their ten error correction codewords.
        let examples: [(data: [UInt8], ec: [UInt8])] = [
            (
                [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11],
                [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55]
            ),
            (
                [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17],
                [196, 35, 39, 119, 235, 215, 231, 226, 93, 23]
            ),
        ]
        for example in examples {
            #expect(ReedSolomon.remainder(example.data, generator: ReedSolomon.generator(degree: 10)) == example.ec)
        }
    }

    @Test("every version's alignment patterns sit where the standard's table puts them")
    func alignment() {
        #expect(QRCode.alignmentCentres(version: 1) == [])
        #expect(QRCode.alignmentCentres(version: 2) == [6, 18])
        #expect(QRCode.alignmentCentres(version: 7) == [6, 22, 38])
        #expect(QRCode.alignmentCentres(version: 14) == [6, 26, 46, 66])
        #expect(QRCode.alignmentCentres(version: 15) == [6, 26, 48, 70])
    }

    @Test("too much to fit is refused, not truncated")
    func tooLong() {
        #expect(QRCode(bytes: Array(repeating: 0x41, count: 413)) == nil)
        #expect(QRCode(bytes: Array(repeating: 0x41, count: 412))?.version == 15)
    }

    @Test(
        "ZBar reads back every generated code: each version 1-15 at its fullest, and otpauth URIs",
        .enabled(if: TestTool.ready(.librsvg, .zbar), Comment(rawValue: TestTool.missing(.librsvg, .zbar)))
    )
    func decodes() throws {
        var texts: [String] = [
            "otpauth://totp/BioAuth:mei?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=BioAuth&algorithm=SHA1&digits=6&period=30",
            "otpauth://totp/Bank%20Staging:ada?secret=ABCDEFGHIJKLMNOPQRSTUVWXYZ234567&issuer=Bank%20Staging",
            "a",
        ]
        // The most bytes each version holds at level M, so every version and block layout is drawn once.
        let capacities = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%")
        for count in capacities {
            texts.append(String((0..<count).map { _ in alphabet.randomElement(using: &generator) ?? "A" }))
        }
        for (index, text) in texts.enumerated() {
            let code = try #require(QRCode(text: text))
            if index >= 3 { #expect(code.version == index - 2, "\(text.utf8.count) bytes") }
            // The input is random: a failure says what was encoded and what ZBar read, so that it can be run again.
            let read = try Self.decode(code)
            #expect(read == text, "version \(code.version), mask \(code.mask): ZBar read \(read.debugDescription) for \(text.debugDescription)")
        }
    }

    @Test("the SVG has no script and no style, only presentation attributes a strict CSP allows")
    func svgIsInert() throws {
        let svg = try #require(QRCode(text: "otpauth://totp/x")).svg(label: "<script>\"")
        #expect(!svg.contains("<script") && !svg.contains("style="))
        #expect(svg.contains("aria-label=\"&lt;script>&quot;\""))
    }
}
