import BioAuthCore
import Foundation
import Testing

@testable import BioAuthClient

@Suite("LocalAuthentication errors")
struct BiometricErrorTests {
    /// Every `LAError` raw code, what it becomes, and what the user is offered.
    static let table: [(laCode: Int, code: BiometricError.Code, recovery: RecoveryAction, english: String, chinese: String)] = [
        (-1, .authenticationFailed, .retry, "Face ID didn't recognize you. Try again.", "面容 ID 未能识别，请重试。"),
        (-2, .userCancel, .none, "Cancelled.", "已取消。"),
        (-3, .userFallback, .usePassword, "Continue with your password.", "请使用密码继续。"),
        (-4, .systemCancel, .retry, "Face ID was interrupted. Try again.", "面容 ID 验证被中断，请重试。"),
        (-5, .passcodeNotSet, .openSettingsToSetPasscode, "Set a device passcode in Settings to use Face ID.", "请先在“设置”中设置设备密码，才能使用面容 ID。"),
        (
            -6, .biometryNotAvailable, .usePassword,
            "Face ID isn't available on this device or isn't allowed for this app. You can allow it in Settings, or continue with your password.",
            "此设备无法使用面容 ID，或未允许本应用使用。可在“设置”中允许，或使用密码继续。"
        ),
        (-7, .biometryNotEnrolled, .openSettingsToEnroll, "Face ID isn't set up. Set it up in Settings, then try again.", "尚未设置面容 ID。请在“设置”中设置后重试。"),
        (
            -8, .biometryLockout, .enterPasscode, "Face ID is locked after too many failed attempts. Enter your device passcode to unlock it.",
            "面容 ID 因多次验证失败已被锁定，请输入设备密码解锁。"
        ),
        (-9, .appCancel, .none, "Verification was cancelled.", "验证已取消。"),
        (-10, .invalidContext, .retry, "Verification expired. Try again.", "验证已失效，请重试。"),
        (
            -11, .companionNotAvailable, .usePassword, "No paired device is available to verify you. Continue with your password.",
            "没有可用于验证的配对设备，请使用密码继续。"
        ),
        (-12, .biometryNotPaired, .usePassword, "The Face ID accessory isn't paired. Continue with your password.", "面容 ID 配件未配对，请使用密码继续。"),
        (-13, .biometryDisconnected, .usePassword, "The Face ID accessory is disconnected. Continue with your password.", "面容 ID 配件已断开连接，请使用密码继续。"),
        (-14, .invalidDimensions, .none, "The verification prompt couldn't be shown.", "无法显示验证界面。"),
        (-1004, .notInteractive, .retry, "Verification can only start while the app is open. Try again.", "只有在应用打开时才能进行验证，请重试。"),
    ]

    @Test("every LAError raw code maps to its own error, recovery and messages in both languages")
    func everyCode() {
        for row in Self.table {
            let error = BiometricError(laErrorCode: row.laCode)
            #expect(error.code == row.code, "\(row.laCode)")
            #expect(error.laErrorCode == row.laCode)
            #expect(error.code.laErrorCode == row.laCode)
            #expect(error.recovery == row.recovery, "\(row.laCode)")
            #expect(error.message(in: .english, biometry: .faceID) == row.english)
            #expect(error.message(in: .simplifiedChinese, biometry: .faceID) == row.chinese)
        }
        #expect(Set(Self.table.map(\.code)).count == Self.table.count)
    }

    @Test("an unknown code keeps its raw value and sends the user to the password", arguments: [-99, -1000, 1, 0, -15])
    func unknownCode(raw: Int) {
        let error = BiometricError(laErrorCode: raw)
        #expect(error.code == .unknown)
        #expect(error.laErrorCode == raw)
        #expect(error.recovery == .usePassword)
        #expect(error.reason.contains("\(raw)"))
        #expect(error.message(in: .english, biometry: .touchID) == "Touch ID verification failed. Continue with your password.")
    }

    @Test("every code has a message in every language, for every sensor")
    func noMissingMessages() {
        for code in BiometricError.Code.all {
            for language in Language.all {
                for kind in BiometryKind.allKnown {
                    let message = BiometricError(code).message(in: language, biometry: kind)
                    #expect(!message.isEmpty)
                    #expect(!message.hasPrefix("error."), "\(code) has no \(language) message")
                    #expect(!message.contains("%"), "\(code) \(language): unfilled placeholder")
                }
            }
        }
    }

    @Test("messages name the sensor the device has")
    func sensorNames() {
        let lockout = BiometricError(laErrorCode: -8)
        #expect(lockout.message(in: .english, biometry: .touchID).hasPrefix("Touch ID is locked"))
        #expect(lockout.message(in: .simplifiedChinese, biometry: .touchID).hasPrefix("触控 ID 因多次"))
        #expect(lockout.message(in: .english, biometry: .opticID).hasPrefix("Optic ID is locked"))
        #expect(lockout.message(in: .english, biometry: .none).hasPrefix("Face ID or Touch ID is locked"))
    }

    @Test("the enrollment-change error tells the user to sign in with the password and re-enable")
    func keyInvalidated() {
        let error = BiometricError(.keyInvalidated)
        #expect(error.laErrorCode == nil)
        #expect(error.recovery == .usePassword)
        #expect(error.message(in: .english, biometry: .faceID).contains("Sign in with your password and turn it on again"))
        #expect(error.message(in: .simplifiedChinese, biometry: .faceID).contains("请使用密码登录后重新开启"))
    }

    @Test("equality compares codes; stable strings")
    func equality() {
        #expect(BiometricError(laErrorCode: -8) == BiometricError(.biometryLockout, reason: "other words"))
        #expect(BiometricError(laErrorCode: -8) != BiometricError(laErrorCode: -7))
        #expect(BiometricError.Code.biometryLockout.description == "biometry_lockout")
        #expect(BiometricError.Code.notInteractive.description == "not_interactive")
    }
}

@Suite("Localized resources")
struct LocalizedResourceTests {
    @Test("every reason biometric sign-in was turned off, and the server problems users meet, have text in both languages")
    func reasonsAndProblems() {
        let reasons: [BiometricSignInOffReason] = [.userDisabled, .enrollmentChanged, .keyMissing, .deviceRevoked, .accountChanged]
        for language in Language.all {
            for reason in reasons {
                let message = reason.message(in: language, biometry: .faceID)
                #expect(!message.hasPrefix("off.") && !message.contains("%"), "\(reason) \(language)")
            }
        }
        #expect(BiometricSignInOffReason.deviceRevoked.message(in: .simplifiedChinese, biometry: .touchID).hasPrefix("由于此设备已从你的账户中移除，触控 ID 登录已关闭"))
        #expect(
            APIProblem(.deviceRevoked, detail: "x").message(in: .english) == "This device was removed from your account. Sign in with your password."
        )
        #expect(APIProblem(.serverUnreachable, detail: "x").message(in: .simplifiedChinese) == "无法连接服务器，请检查网络后重试。")
        #expect(APIProblem(ProblemCode(rawValue: "from_a_newer_server"), detail: "x").message(in: .english) == "Something went wrong. Try again.")
    }

    @Test("English and Simplified Chinese tables have the same keys")
    func sameKeys() {
        let english = Localizer.table(.english)
        let chinese = Localizer.table(.simplifiedChinese)
        #expect(english.count > 40)
        #expect(Set(english.keys) == Set(chinese.keys))
        for (key, value) in english {
            #expect(Self.placeholders(value) == Self.placeholders(chinese[key] ?? ""), "\(key): placeholders differ")
        }
    }

    @Test(
        "preferred languages pick English or Simplified Chinese",
        arguments: [
            (["zh-Hans-CN", "en"], "zh-Hans"), (["zh_CN"], "zh-Hans"), (["zh-SG"], "zh-Hans"), (["en-GB"], "en"),
            (["zh-Hant-TW", "en"], "en"), (["zh-HK"], "en"), (["fr-FR"], "en"), ([], "en"), (["de", "zh-Hans"], "zh-Hans"),
        ]
    )
    func preferred(identifiers: [String], expected: String) {
        #expect(Language.preferred(from: identifiers).identifier == expected)
    }

    static func placeholders(_ text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let range = rest.range(of: "%") {
            let after = rest[range.upperBound...]
            found.append(String(after.prefix(3)))
            rest = after
        }
        return found.sorted()
    }
}
