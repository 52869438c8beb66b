import BioAuthClient
import Testing

@testable import bioauth

@Suite("bioauth demo")
struct DemoTests {
    @Test("every step of the story behaves as told, in both languages", arguments: Language.all)
    func story(language: Language) async {
        let report = await DemoStory(language: language, verbose: false).run()
        for step in report.steps where !step.passed {
            Issue.record("\(step.title): \(step.detail)")
        }
        #expect(report.steps.count == 12)
        #expect(
            report.steps.contains { $0.detail.contains("webhook verified") || $0.detail.contains("Webhook 已验证") },
            "the bank's webhook arrived, verified"
        )
        #expect(report.allPassed)
    }

    @Test("an unknown language is refused before anything runs")
    func unknownLanguage() throws {
        #expect(throws: (any Error).self) { try DemoCommand.parse(["--language", "fr"]) }
        let zh = try DemoCommand.parse(["--language", "zh-Hans"])
        #expect(zh.language == "zh-Hans")
    }
}
