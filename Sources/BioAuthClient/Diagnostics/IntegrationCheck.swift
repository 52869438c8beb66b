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
    /// - `missing_local_network_usage_description`: `serverURL` is on the local network (a private or link-local
    ///   address, a `.local` name: a test server on a Mac) and `NSLocalNetworkUsageDescription` is missing, so iOS
    ///   (14 or later) refuses the connection without asking.
    public static func warnings(
        infoDictionary: [String: Any]?,
        biometry: BiometryKind,
        language: Language,
        serverURL: URL? = nil
    ) -> [IntegrationWarning] {
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
        if let host = serverURL?.host, isOnLocalNetwork(host),
            (info["NSLocalNetworkUsageDescription"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ?? true
        {
            warnings.append(
                IntegrationWarning(
                    code: "missing_local_network_usage_description",
                    message: "the server (\(host)) is on the local network but Info.plist has no NSLocalNetworkUsageDescription; "
                        + "iOS refuses the connection without asking. Add it (and its zh-Hans InfoPlist.strings)."
                )
            )
        }
        return warnings
    }

    /// Whether `host` is reached over the local network: an IPv4 private (10/8, 172.16/12, 192.168/16) or link-local
    /// (169.254/16) address, an IPv6 link-local or unique-local address, or a `.local` (Bonjour) name. Loopback is not
    /// (it never leaves the device).
    static func isOnLocalNetwork(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]."))
        if name.hasSuffix(".local") { return true }
        if name.contains(":") { return name.hasPrefix("fe80:") || name.hasPrefix("fc") || name.hasPrefix("fd") }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard octets.count == 4, let first = octets[0], let second = octets[1], octets.allSatisfy({ $0 != nil }) else { return false }
        return first == 10 || (first == 172 && (16...31).contains(second)) || (first == 192 && second == 168)
            || (first == 169 && second == 254)
    }
}
