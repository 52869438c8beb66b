import Foundation
import Testing

@testable import bioauth

@Suite("bioauth bench")
struct BenchCommandTests {
    @Test("a short run works: both operations succeed, the JSON and the SVG are written (no numbers asserted)")
    func smoke() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-smoke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let command = try BenchCommand.parse([
            "--devices", "3", "--concurrency", "2", "--duration", "0.6", "--warmup", "0.2", "--bcrypt-cost", "4",
            "--password-workers", "1", "--output", folder.path, "--quiet",
        ])
        try await command.run()
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("bench-result.json"))) as? [String: Any]
        let operations = try #require(json?["operations"] as? [[String: Any]])
        #expect(Set(operations.compactMap { $0["operation"] as? String }) == ["biometric_sign_in", "payment", "password_sign_in"])
        #expect(operations.allSatisfy { ($0["errors"] as? [String: Int])?.isEmpty == true })
        #expect(operations.filter { $0["operation"] as? String != "password_sign_in" }.allSatisfy { ($0["ok"] as? Int ?? 0) > 0 })
        #expect((json?["rawVerifyPerSecond"] as? Double ?? 0) > 0)
        let svg = try String(contentsOf: folder.appendingPathComponent("bench-latency.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("<polyline") && svg.hasSuffix("</svg>"))
    }

    @Test("bad options are refused before anything starts", arguments: [
        ["--concurrency", "0"], ["--mix", "everything"], ["--duration", "0"], ["--server", "ftp://x"], ["--bcrypt-cost", "2"],
    ])
    func refused(arguments: [String]) {
        #expect(throws: (any Error).self) { try BenchCommand.parse(arguments) }
    }
}
