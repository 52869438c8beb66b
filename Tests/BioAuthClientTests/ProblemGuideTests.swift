import BioAuthCore
import Foundation
import Testing

@testable import BioAuthClient

/// Every refusal a user can cause is explained in their language, with what to do next: a server code cannot ship without
/// its classification and its copy.
@Suite("Problem guide: every code has a kind, a recovery and a message in both languages")
struct ProblemGuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("ProblemCode.all lists every code ProblemCode declares, and PROTOCOL.md's table documents each")
    func allIsComplete() throws {
        let source = try String(contentsOf: Self.root.appendingPathComponent("Sources/BioAuthCore/Wire/ProblemCode.swift"), encoding: .utf8)
        let declared = source.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "ProblemCode(rawValue: \"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
        #expect(declared.count == ProblemCode.all.count && Set(declared) == Set(ProblemCode.all.map(\.rawValue)))
        let protocolText = try String(contentsOf: Self.root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        for code in ProblemCode.all { #expect(protocolText.contains("`\(code.rawValue)`"), "\(code) is documented in PROTOCOL.md") }
    }

    @Test("every code the server answers with, and the SDK's own, has a kind, a recovery and a message in English and Chinese")
    func everyCodeGuided() {
        let generalEnglish = Localizer.string("problem.other", language: .english)
        let generalChinese = Localizer.string("problem.other", language: .simplifiedChinese)
        for code in ProblemCode.all + [.serverUnreachable, .unexpectedResponse] {
            let problem = APIProblem(code, detail: "x")
            guard let kind = problem.kind else {
                Issue.record("\(code) has no kind")
                continue
            }
            #expect(problem.message(in: .english) != generalEnglish, "\(code): English")
            #expect(problem.message(in: .simplifiedChinese) != generalChinese, "\(code): Chinese")
            if kind == .userCanFix || kind == .signInAgain {
                // A user meets these: each says what to do about this code, not a kind's general words.
                #expect(Localizer.template("problem.\(code.rawValue)", language: .english) != nil, "\(code): its own English message")
                #expect(Localizer.template("problem.\(code.rawValue)", language: .simplifiedChinese) != nil, "\(code): its own Chinese message")
            }
        }
    }

    @Test(
        "the refusals the tester met are explained, with what to do",
        arguments: [
            (ProblemCode.invalidPassword, RecoveryAction.changeInput, "at least 8 characters", "至少需要 8 位"),
            (.invalidUsername, .changeInput, "3 to 64 characters", "3 至 64 位"),
            (.weakPIN, .changeInput, "too easy to guess", "过于简单"),
            (.payeeNotRegistered, .contactBank, "Contact your bank", "联系银行"),
            (.accountLocked, .tryLater, "Try again later", "稍后再试"),
            (.tokenExpired, .signInAgain, "Sign in again", "重新登录"),
            (.webhookEndpointLimit, .updateApp, "Update the app", "更新应用"),
        ]
    )
    func explained(code: ProblemCode, recovery: RecoveryAction, english: String, chinese: String) {
        let problem = APIProblem(code, status: 400, detail: "x")
        #expect(problem.recovery == recovery)
        #expect(problem.message(in: .english).contains(english), "\(problem.message(in: .english))")
        #expect(problem.message(in: .simplifiedChinese).contains(chinese), "\(problem.message(in: .simplifiedChinese))")
        #expect(BioAuthScreens(language: .english).message(for: problem, biometry: .faceID) == problem.message(in: .english))
    }

    @Test(
        "a lock or a rate limit says how long to wait, from the server's Retry-After",
        arguments: [
            (ProblemCode.accountLocked, 290, "Too many wrong passwords. Try again in 5 minutes.", "密码错误次数过多，请 5 分钟后再试。"),
            (.rateLimited, 1, "Too many attempts. Try again in 1 second.", "尝试次数过多，请 1 秒后再试。"),
            (.pinLocked, 3600, "Too many wrong payment PINs. Try again in 1 hour, or pay with biometrics.", "支付密码错误次数过多，请 1 小时后再试，或使用生物识别支付。"),
            (.pinLocked, 3601, "Too many wrong payment PINs. Try again in 2 hours, or pay with biometrics.", "支付密码错误次数过多，请 2 小时后再试，或使用生物识别支付。"),
        ]
    )
    func waits(code: ProblemCode, seconds: Int, english: String, chinese: String) {
        let problem = APIProblem(code, status: 429, detail: "x", retryAfter: seconds)
        #expect(problem.message(in: .english) == english)
        #expect(problem.message(in: .simplifiedChinese) == chinese)
        #expect(APIProblem(code, status: 429, detail: "x").message(in: .english).contains("later"), "without a time: later")
    }

    @Test("a code from a newer server gets the general message and the offer to retry")
    func unknownCode() {
        let problem = APIProblem(ProblemCode(rawValue: "from_a_newer_server"), detail: "x")
        #expect(problem.kind == nil && problem.recovery == .retry)
        #expect(problem.message(in: .english) == "Something went wrong. Try again.")
    }
}
