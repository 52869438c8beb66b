import BioAuthCore
import Foundation
import Testing

@testable import BioAuthServer

/// Every word the console shows exists in English and Simplified Chinese, data included: states, sign-in methods,
/// biometry kinds, roles, event kinds and outcomes. A new key, template word or audit kind without both fails here.
@Suite("Console text")
struct ConsoleTextTests {
    static let templates = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/BioAuthServer/Console/Templates")

    @Test("English and Chinese have the same keys, and no Chinese text is left in English")
    func sameKeys() {
        #expect(ConsoleLanguage.englishKeys.subtracting(ConsoleLanguage.chineseKeys).sorted() == [], "missing in Chinese")
        #expect(ConsoleLanguage.chineseKeys.subtracting(ConsoleLanguage.englishKeys).sorted() == [], "missing in English")
        // A Chinese text that is only ASCII letters is an untranslated copy (codes, names and units aside).
        let untranslated = ConsoleLanguage.chineseKeys.filter { key in
            let text = ConsoleLanguage.simplifiedChinese[key]
            return text == ConsoleLanguage.english[key] && text.unicodeScalars.contains { CharacterSet.letters.contains($0) }
                && !["biometricLegend", "console", "kind.app_attestation", "kind.app_assertion", "webhookEndpoints"].contains(key)
        }
        #expect(untranslated.sorted() == [])
    }

    @Test("every {{t.word}} a template uses exists in both languages")
    func templatesWords() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.templates.path).filter { $0.hasSuffix(".mustache") }
        #expect(files.count >= 9)
        var used: Set<String> = []
        for file in files {
            let text = try String(contentsOf: Self.templates.appendingPathComponent(file), encoding: .utf8)
            var rest = text[...]
            while let start = rest.range(of: "{{t.") {
                let after = rest[start.upperBound...]
                guard let end = after.range(of: "}}") else { break }
                used.insert(String(after[..<end.lowerBound]))
                rest = after[end.upperBound...]
            }
        }
        #expect(used.count > 50)
        #expect(used.subtracting(ConsoleLanguage.englishKeys).sorted() == [], "used but not written")
    }

    @Test("data words: every audit kind, payment state, sign-in method, biometry kind, role, outcome and delivery state")
    func dataWords() {
        var keys = AuditKind.allCases.map { "kind.\($0.rawValue)" }
        keys += PaymentInfo.Status.allCases.map { "status.\($0.rawValue)" }
        keys += ["password", "biometric", "passkey", "approval"].map { "method.\($0)" }
        keys += BiometryKind.allKnown.map { "biometry.\($0.rawValue)" }
        keys += OperatorRole.allCases.map { "role.\($0.rawValue)" }
        keys += ["success", "failure"].map { "outcome.\($0)" }
        keys += ["pending", "delivered", "failed"].map { "delivery.\($0)" }
        keys += ["verified", "unverified"].map { "verification.\($0)" }
        keys += ApprovalInfo.Status.allCases.map { "approval.\($0.rawValue)" }
        keys += CanonicalApproval.Kind.allCases.map { "approvalKind.\($0.rawValue)" }
        keys += ["denied", "number_mismatch"].map { "denyReason.\($0)" }
        #expect(keys.filter { !ConsoleLanguage.englishKeys.contains($0) || !ConsoleLanguage.chineseKeys.contains($0) } == [])
        #expect(ConsoleLanguage.simplifiedChinese.word("status", "pending") == "待授权")
        #expect(ConsoleLanguage.simplifiedChinese.word("kind", "device_revoked") == "撤销设备")
        #expect(ConsoleLanguage.simplifiedChinese.word("kind", "some_future_kind") == "some_future_kind", "unknown data shows as it is")
    }

    @Test("the operator-change index and the audit kinds name the same operator kinds")
    func operatorKinds() {
        let kinds = AuditKind.allCases.map(\.rawValue).filter { $0.hasPrefix("operator_") }
        #expect(kinds.count == 7)
        #expect(kinds.allSatisfy { AuditEventsTable.operatorChangeKinds.contains("'\($0)'") })
    }

    @Test("times in the console's zone, with how long ago in the page's language")
    func times() throws {
        let now = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21T14:13:20Z
        let shanghai = ConsoleTime(timeZone: "Asia/Shanghai", language: .simplifiedChinese, now: now)
        #expect(shanghai.format(now.addingTimeInterval(-180)) == "2026-09-21 22:10:20（3 分钟前）")
        #expect(shanghai.format(now.addingTimeInterval(-2 * 86_400)) == "2026-09-19 22:13:20")
        #expect(shanghai.zoneName == "Asia/Shanghai (UTC+08:00)")
        let utc = ConsoleTime(timeZone: "UTC", language: .english, now: now)
        #expect(utc.format(now.addingTimeInterval(-7200)) == "2026-09-21 12:13:20 (2 h ago)")
        #expect(utc.format(now.addingTimeInterval(300)) == "2026-09-21 14:18:20 (in 5 min)")
        #expect(utc.format(now) == "2026-09-21 14:13:20 (just now)")
        #expect(utc.format(nil) == "–")
        #expect(ConsoleTime(timeZone: "Asia/Kolkata", language: .english, now: now).hour(now) == "19:43")
    }

    @Test("a key grouped in fours for typing")
    func grouping() {
        #expect(Console.grouped("ABCDEFGHIJ") == "ABCD EFGH IJ")
        #expect(Console.grouped("") == "")
    }

    @Test("the desk's refusals read in the page's language: the common ones in its words, others with the English reason after")
    func refusals() {
        #expect(
            Console.explain(.invalid("a reason is required: 1-500 characters without control characters"), language: .simplifiedChinese)
                == "请填写原因：1-500 个字符，不含控制字符。"
        )
        #expect(Console.explain(.invalid("the payment is cancelled, not pending"), language: .english) == "The payment is no longer pending.")
        #expect(Console.explain(.notFound("the customer has no device x"), language: .simplifiedChinese) == "未找到（the customer has no device x）")
        #expect(Console.explain(.notFound("the customer has no device x"), language: .english) == "Not found: the customer has no device x")
        #expect(Console.explain(.invalid("vic is already support"), language: .english) == "The operator already has this role.")
    }
}
