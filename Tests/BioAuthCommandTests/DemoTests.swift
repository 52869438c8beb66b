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
        #expect(report.steps.count == 17)
        #expect(report.steps.contains { $0.detail.hasPrefix("step_up_required") }, "changing the PIN asked for Face ID")
        #expect(
            report.steps.contains { $0.detail.contains("webhook verified") || $0.detail.contains("Webhook 已验证") },
            "the bank's webhook arrived, verified"
        )
        #expect(
            report.steps.contains { $0.detail.hasPrefix("device_binding_required") },
            "the thief's phone was refused and the request denied on Alice's iPhone"
        )
        #expect(report.steps.contains { $0.detail.contains("account.recovered") }, "the lost phone's recovery reached the bank")
        #expect(report.allPassed)
        if language == .english {
            // One language per run: no Chinese in the English story's titles.
            let chinese = report.steps.map(\.title).filter { $0.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } }
            #expect(chinese.isEmpty, "\(chinese)")
        }
    }

    @Test("ids are shown by their random end: two ids made in one millisecond read apart")
    func shortIDs() {
        // Two UUIDv7s of the same millisecond: the same first 12 hex digits, different ends.
        let first = "019b76da-a800-7e66-aa37-f3a8e5554aac"
        let second = "019b76da-a800-75ea-bc39-ca1ce9ad6f6c"
        #expect(DemoStory.short(first) == "…e5554aac" && DemoStory.short(first) != DemoStory.short(second))
    }

    @Test("an unknown language is refused before anything runs")
    func unknownLanguage() throws {
        #expect(throws: (any Error).self) { try DemoCommand.parse(["--language", "fr"]) }
        let zh = try DemoCommand.parse(["--language", "zh-Hans"])
        #expect(zh.language == "zh-Hans")
    }
}
