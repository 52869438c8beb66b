import BioAuthClient

/// What happened in each step of a demo, and the closing table.
struct DemoReport {
    struct Step {
        let title: String
        let passed: Bool
        let detail: String
    }

    let language: Language
    private(set) var steps: [Step] = []

    init(language: Language) { self.language = language }

    var allPassed: Bool { !steps.isEmpty && steps.allSatisfy(\.passed) }

    mutating func record(_ title: String, passed: Bool, detail: String) {
        steps.append(Step(title: title, passed: passed, detail: detail))
    }

    var summary: String {
        let zh = language == .simplifiedChinese
        let width = steps.map { Self.displayWidth($0.title) }.max() ?? 0
        var lines = ["", zh ? "小结" : "Summary"]
        for (index, step) in steps.enumerated() {
            let mark = step.passed ? "✓" : "✗"
            let padding = String(repeating: " ", count: max(0, width - Self.displayWidth(step.title)))
            lines.append(" \(mark) \(index + 1 < 10 ? " " : "")\(index + 1). \(step.title)\(padding)  \(step.detail)")
        }
        let failed = steps.filter { !$0.passed }.count
        lines.append(
            failed == 0
                ? (zh ? "全部 \(steps.count) 步符合预期。" : "All \(steps.count) steps behaved as expected.")
                : (zh ? "\(failed) 步与预期不符。" : "\(failed) of \(steps.count) steps did not behave as expected.")
        )
        return lines.joined(separator: "\n")
    }

    /// Terminal columns: CJK characters and full-width punctuation take two.
    private static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            width + ((0x2E80...0xA4CF).contains(scalar.value) || (0xFF00...0xFF60).contains(scalar.value) ? 2 : 1)
        }
    }
}
