import Foundation
import Testing

@testable import BioAuthClient

/// The SDK's privacy manifest ships in its bundle and says what the code does: no tracking, what it sends to the
/// bank's server, and a reason for every required-reason API the SDK's sources call.
@Suite("Privacy manifest")
struct PrivacyManifestTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Apple's required-reason API categories and the symbols that fall in each (Apple's "Describing use of required
    /// reason API").
    static let requiredReasonSymbols: [String: [String]] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": [
            "creationDate", "modificationDate", "fileModificationDate", "contentModificationDateKey", "creationDateKey",
            "NSFileCreationDate", "NSFileModificationDate", "getattrlist", "fstat", "lstat", "stat",
        ],
        "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time"],
        "NSPrivacyAccessedAPICategoryDiskSpace": [
            "volumeAvailableCapacityKey", "volumeAvailableCapacityForImportantUsageKey", "volumeTotalCapacityKey",
            "systemFreeSize", "systemSize", "NSFileSystemFreeSize", "statfs", "fstatfs",
        ],
        "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
        "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults", "NSUserDefaults"],
    ]

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: Localizer.resourceRoot.appendingPathComponent("PrivacyInfo.xcprivacy"))
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    /// The categories whose symbols `source` calls (whole identifiers only: `status(` is not `stat(`).
    static func categoriesUsed(in source: String) -> Set<String> {
        var used: Set<String> = []
        for (category, symbols) in requiredReasonSymbols {
            for symbol in symbols where source.range(of: "\\b\(symbol)\\b", options: .regularExpression) != nil {
                used.insert(category)
            }
        }
        return used
    }

    @Test("the manifest ships in the SDK's bundle: no tracking, no tracking domains, a user and a device identifier for the app's function")
    func shipped() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(
            Set(collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }) == [
                "NSPrivacyCollectedDataTypeUserID", "NSPrivacyCollectedDataTypeDeviceID",
            ]
        )
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
            #expect(entry["NSPrivacyCollectedDataTypePurposes"] as? [String] == ["NSPrivacyCollectedDataTypePurposeAppFunctionality"])
        }
    }

    @Test("every required-reason API the SDK's sources call is declared with a reason, and nothing else is")
    func requiredReasonAPIs() throws {
        var used: Set<String> = []
        var files = 0
        for target in ["Sources/BioAuthClient", "Sources/BioAuthApple"] {
            let folder = Self.root.appendingPathComponent(target)
            let enumerator = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            for case let url as URL in enumerator where url.pathExtension == "swift" && !url.path.contains("/Generated/") {
                let code = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").filter {
                    !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                }
                used.formUnion(Self.categoriesUsed(in: code.joined(separator: "\n")))
                files += 1
            }
        }
        #expect(files > 40)
        let declared = try #require(Self.manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        for entry in declared {
            #expect((entry["NSPrivacyAccessedAPITypeReasons"] as? [String])?.isEmpty == false, "\(entry)")
        }
        #expect(Set(declared.compactMap { $0["NSPrivacyAccessedAPIType"] as? String }) == used)
    }

    @Test("the scan finds a required-reason call, and not a look-alike name")
    func scannerSeesCalls() {
        #expect(Self.categoriesUsed(in: "let flag = UserDefaults.standard.bool(forKey: \"x\")") == ["NSPrivacyAccessedAPICategoryUserDefaults"])
        #expect(Self.categoriesUsed(in: "let up = ProcessInfo.processInfo.systemUptime") == ["NSPrivacyAccessedAPICategorySystemBootTime"])
        #expect(Self.categoriesUsed(in: "let s = status(of: key); let m = lastModificationDateOfTheThing") == [])
    }
}
