import BioAuthCore
import Foundation

/// A mistake in how an app integrates BioAuth, found at run time in debug builds.
public struct IntegrationWarning: Hashable, Sendable, CustomStringConvertible {
    /// A stable code, e.g. `"missing_face_id_usage_description"`.
    public let code: String
    /// What is wrong and how to fix it, in English, for the developer (never shown to users).
    public let message: String

    public var description: String { "BioAuth: \(code): \(message)" }
}

/// Checks an app's `Info.plist` values. `BioAuthApple` runs it on `Bundle.main` in debug builds and prints
/// what it finds.
public enum IntegrationCheck {
    /// Warnings for the app's `Info.plist` (`Bundle.main.infoDictionary`) on a device with `biometry`.
    ///
    /// - `missing_face_id_usage_description`: without `NSFaceIDUsageDescription` an app may not use Face ID: iOS ends
    ///   it when it asks (the Simulator shows a compatibility alert instead), so every biometric flow fails.
    /// - `empty_face_id_usage_description`: present but blank; App Review rejects it and users see no reason.
    /// - `missing_chinese_localization`: the app uses Simplified Chinese prompts but does not declare `zh-Hans`
    ///   (`CFBundleLocalizations`), so the system's own buttons stay in English.
    public static func warnings(infoDictionary: [String: Any]?, biometry: BiometryKind, language: Language) -> [IntegrationWarning] {
        var warnings: [IntegrationWarning] = []
        let info = infoDictionary ?? [:]
        // Face ID needs the usage string; checked for every device, since the same build runs on both kinds.
        switch info["NSFaceIDUsageDescription"] {
        case let text as String where !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty:
            break
        case .some:
            warnings.append(
                IntegrationWarning(
                    code: "empty_face_id_usage_description",
                    message: "NSFaceIDUsageDescription in Info.plist is empty; say why the app uses Face ID."
                )
            )
        case .none:
            warnings.append(
                IntegrationWarning(
                    code: "missing_face_id_usage_description",
                    message: "Info.plist has no NSFaceIDUsageDescription; Face ID prompts fail"
                        + (biometry == .faceID ? " on this device" : " on Face ID devices") + ". Add it (and its zh-Hans InfoPlist.strings)."
                )
            )
        }
        if language == .simplifiedChinese {
            let declared = (info["CFBundleLocalizations"] as? [String]) ?? []
            let development = (info["CFBundleDevelopmentRegion"] as? String).map { [$0] } ?? []
            if !(declared + development).contains(where: { Language(matching: $0) == .simplifiedChinese }) {
                warnings.append(
                    IntegrationWarning(
                        code: "missing_chinese_localization",
                        message: "prompts are in Simplified Chinese but CFBundleLocalizations lacks zh-Hans; system buttons stay in English."
                    )
                )
            }
        }
        return warnings
    }
}
