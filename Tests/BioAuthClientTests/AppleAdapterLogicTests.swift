import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

/// The decisions behind BioAuthApple's thin files: LocalAuthentication answers, lifecycle events, the
/// Info.plist check.
@Suite("Apple adapter logic")
struct AppleAdapterLogicTests {
    @Test("LABiometryType raw values map to sensors; an unknown future value is none")
    func biometryTypes() {
        #expect(LocalAuthenticationMapping.biometryKind(laBiometryTypeRawValue: 0) == .none)
        #expect(LocalAuthenticationMapping.biometryKind(laBiometryTypeRawValue: 1) == .touchID)
        #expect(LocalAuthenticationMapping.biometryKind(laBiometryTypeRawValue: 2) == .faceID)
        #expect(LocalAuthenticationMapping.biometryKind(laBiometryTypeRawValue: 4) == .opticID)
        #expect(LocalAuthenticationMapping.biometryKind(laBiometryTypeRawValue: 3) == .none)
    }

    @Test("availability: the failed check's code wins; the kind is read only after success")
    func availability() {
        let locked = LocalAuthenticationMapping.availability(for: .biometrics, canEvaluate: false, errorCode: -8, biometryTypeRawValue: 2)
        #expect(locked == .unavailable(BiometricError(laErrorCode: -8)))
        #expect(locked.kind == .none)
        let noError = LocalAuthenticationMapping.availability(for: .biometrics, canEvaluate: false, errorCode: nil, biometryTypeRawValue: 0)
        #expect(noError == .unavailable(BiometricError(.biometryNotAvailable)))
        #expect(
            LocalAuthenticationMapping.availability(for: .biometrics, canEvaluate: true, errorCode: nil, biometryTypeRawValue: 2)
                == .available(.faceID)
        )
        // Biometrics "available" with no known sensor is not available for biometrics, but the passcode policy is.
        #expect(!LocalAuthenticationMapping.availability(for: .biometrics, canEvaluate: true, errorCode: nil, biometryTypeRawValue: 0).isAvailable)
        #expect(
            LocalAuthenticationMapping.availability(for: .deviceOwner, canEvaluate: true, errorCode: nil, biometryTypeRawValue: 0)
                == .available(.none)
        )
    }

    @Test("evaluation errors: every LAError code maps; a cancelled task is app cancel; other domains are unknown")
    func evaluationErrors() {
        for code in [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -1004] {
            #expect(
                LocalAuthenticationMapping.evaluationError(domain: LocalAuthenticationMapping.errorDomain, code: code, taskCancelled: false)
                    == BiometricError(laErrorCode: code)
            )
        }
        #expect(
            LocalAuthenticationMapping.evaluationError(domain: LocalAuthenticationMapping.errorDomain, code: -2, taskCancelled: true).code
                == .appCancel
        )
        #expect(LocalAuthenticationMapping.evaluationError(domain: "NSOSStatusErrorDomain", code: -25293, taskCancelled: false).code == .unknown)
    }

    @Test("prompt titles: nil keeps the system's, empty fallback hides the button, a blank reason is refused before LAContext")
    func promptTitles() throws {
        let copy = PromptCopy(language: .simplifiedChinese)
        let enable = copy.prompt(for: .enableBiometricSignIn, biometry: .faceID)
        #expect(LocalAuthenticationMapping.contextTitles(for: enable).fallbackTitle == "")
        let pay = copy.prompt(
            for: .authorizePayment(.init(amount: Money(minorUnits: 8800, currency: .cny), payeeName: "Coffee Shop")),
            biometry: .faceID
        )
        #expect(LocalAuthenticationMapping.contextTitles(for: pay) == ("使用支付密码", "取消"))
        let system = BiometricPrompt(policy: .biometrics, reason: "x", fallbackTitle: nil, cancelTitle: "")
        #expect(LocalAuthenticationMapping.contextTitles(for: system) == (nil, nil))
        #expect(throws: BiometricError(.invalidPrompt)) {
            try LocalAuthenticationMapping.validate(BiometricPrompt(policy: .biometrics, reason: "  \n"))
        }
        try LocalAuthenticationMapping.validate(pay)
    }

    @Test(
        "scenePhase changes stand for UIKit's events, in order",
        arguments: [
            (AppPhase.active, AppPhase.inactive, [AppLifecycleEvent.willResignActive]),
            (.inactive, .background, [.didEnterBackground]),
            (.background, .inactive, [.willEnterForeground]),
            (.inactive, .active, [.didBecomeActive]),
            (.active, .background, [.willResignActive, .didEnterBackground]),
            (.background, .active, [.willEnterForeground, .didBecomeActive]),
            (.active, .active, []),
        ]
    )
    func scenePhases(old: AppPhase, new: AppPhase, events: [AppLifecycleEvent]) {
        #expect(AppLifecycleEvent.events(from: old, to: new) == events)
    }

    @Test("lifecycle events drive the lock: a prompt waits for active, a long absence locks")
    func lifecycleDrivesLock() async throws {
        let phone = TestPhone()
        let clock = ManualClock()
        let session = try await phone.signedInWithBiometrics()
        let lock = AppLock(session: session, authenticator: phone.sensor, keyStore: phone.keys, clock: clock, isActive: false)
        // Launch: the scene goes background → active.
        for event in AppLifecycleEvent.events(from: .background, to: .active) { try await lock.handle(event) }
        #expect(await lock.isActive)
        for event in AppLifecycleEvent.events(from: .active, to: .background) { try await lock.handle(event) }
        #expect(await lock.isActive == false)
        clock.advance(by: 120)
        #expect(try await lock.handle(.willEnterForeground) == .locked)
        // Unlocking before the app is active shows no prompt (no -1004): it waits.
        await phone.sensor.script(.match)
        let unlocking = Task { try await lock.unlock() }
        try await Task.sleep(for: .milliseconds(20))
        #expect(await phone.sensor.presentedPrompts.isEmpty)
        try await lock.handle(.didBecomeActive)
        #expect(try await unlocking.value == .unlocked)
    }

    @Test(
        "Info.plist check: missing or empty Face ID usage text, missing zh-Hans",
        arguments: [
            ([String: String](), Language.english, ["missing_face_id_usage_description"]),
            (["NSFaceIDUsageDescription": " "], .english, ["empty_face_id_usage_description"]),
            (["NSFaceIDUsageDescription": "Sign in and pay with Face ID"], .english, []),
            (["NSFaceIDUsageDescription": "用面容 ID 登录和支付"], .simplifiedChinese, ["missing_chinese_localization"]),
            (["NSFaceIDUsageDescription": "用面容 ID 登录和支付", "CFBundleDevelopmentRegion": "zh_CN"], .simplifiedChinese, []),
        ]
    )
    func infoPlist(info: [String: String], language: Language, codes: [String]) {
        let warnings = IntegrationCheck.warnings(infoDictionary: info, biometry: .faceID, language: language)
        #expect(warnings.map(\.code) == codes)
    }

    @Test(
        "a server on the local network needs NSLocalNetworkUsageDescription; loopback and the internet don't",
        arguments: [
            ("http://192.168.1.20:8080", true), ("http://10.0.0.5", true), ("http://172.20.1.1", true), ("http://169.254.3.4", true),
            ("http://my-mac.local:8080", true), ("http://[fe80::1]:8080", true), ("http://[fd12::1]", true),
            ("http://127.0.0.1:8080", false), ("http://localhost:8080", false), ("https://bank.example", false),
            ("http://172.32.0.1", false), ("http://8.8.8.8", false), ("http://192.168.1", false),
        ]
    )
    func localNetwork(url: String, warns: Bool) throws {
        let info: [String: Any] = ["NSFaceIDUsageDescription": "x"]
        let serverURL = try #require(URL(string: url))
        let codes = IntegrationCheck.warnings(infoDictionary: info, biometry: .faceID, language: .english, serverURL: serverURL).map(\.code)
        #expect(codes == (warns ? ["missing_local_network_usage_description"] : []))
        var described = info
        described["NSLocalNetworkUsageDescription"] = "Connect to the test server on your Mac."
        #expect(IntegrationCheck.warnings(infoDictionary: described, biometry: .faceID, language: .english, serverURL: serverURL).isEmpty)
    }

    @Test("the example app's Info.plist passes every check with the server on the Mac's address, in both languages")
    func examplePlist() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Examples/BioAuthExample")
        let data = try Data(contentsOf: folder.appendingPathComponent("Info.plist"))
        var info = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let mac = try #require(URL(string: "http://192.168.1.20:8080"))
        for language in Language.all {
            #expect(IntegrationCheck.warnings(infoDictionary: info, biometry: .faceID, language: language, serverURL: mac).isEmpty)
        }
        let chinese = try String(contentsOf: folder.appendingPathComponent("zh-Hans.lproj/InfoPlist.strings"), encoding: .utf8)
        #expect(chinese.contains("\"NSLocalNetworkUsageDescription\"") && chinese.contains("\"NSFaceIDUsageDescription\""))
        // Missing, or only blanks (iOS would show an empty reason): warned alike.
        for missing in [nil, "   \n"] as [String?] {
            info["NSLocalNetworkUsageDescription"] = missing
            #expect(
                IntegrationCheck.warnings(infoDictionary: info, biometry: .faceID, language: .english, serverURL: mac).map(\.code)
                    == ["missing_local_network_usage_description"],
                "\(String(describing: missing))"
            )
        }
    }

    @Test("a localization list declared as an array counts")
    func infoPlistArray() {
        let info: [String: Any] = ["NSFaceIDUsageDescription": "x", "CFBundleLocalizations": ["en", "zh-Hans"]]
        #expect(IntegrationCheck.warnings(infoDictionary: info, biometry: .touchID, language: .simplifiedChinese).isEmpty)
        #expect(
            IntegrationCheck.warnings(infoDictionary: nil, biometry: .touchID, language: .english).first?.message.contains("on Face ID devices")
                == true
        )
    }
}

@Suite("Screens")
struct BioAuthScreensTests {
    let phone = TestPhone()

    @Test("the sign-in button shows only when signed out on a bound device, in both languages")
    func signInButton() async throws {
        let fresh = try await phone.launch()
        #expect(BioAuthScreens(language: .english).signInButton(for: await fresh.snapshot) == nil)
        let session = try await phone.signedInWithBiometrics()
        #expect(BioAuthScreens(language: .english).signInButton(for: await session.snapshot) == nil)
        try await session.handle(.signedOut)
        let snapshot = await session.snapshot
        #expect(BioAuthScreens(language: .english).signInButton(for: snapshot)?.title == "Sign in with Face ID")
        #expect(BioAuthScreens(language: .simplifiedChinese).signInButton(for: snapshot)?.title == "使用面容 ID 登录")
    }

    @Test("the lock screen shows only when locked")
    func lockScreen() async throws {
        let session = try await phone.signedInWithBiometrics()
        #expect(BioAuthScreens(language: .english).lockScreen(for: await session.snapshot) == nil)
        let relaunched = try await phone.launch()
        let lock = try #require(BioAuthScreens(language: .simplifiedChinese).lockScreen(for: await relaunched.snapshot))
        #expect(lock.title == "已锁定" && lock.unlockButton == "使用面容 ID 解锁" && lock.passwordButton == "使用密码登录")
        #expect(BioAuthScreens(language: .english).lockScreen(for: await relaunched.snapshot)?.message == "Unlock with Face ID to continue.")
    }

    @Test("the settings toggle: on; off with the reason; can't be turned on without enrollment")
    func toggle() async throws {
        let screens = BioAuthScreens(language: .english)
        let session = try await phone.signedInWithBiometrics()
        let on = screens.biometricToggle(for: await session.snapshot, availability: .available(.faceID))
        #expect(on.isOn && on.isEnabled && on.footnote == nil && on.label == "Sign in with Face ID")
        try await session.handle(.enrollmentChanged)
        let off = screens.biometricToggle(for: await session.snapshot, availability: .available(.faceID))
        #expect(!off.isOn && off.isEnabled)
        #expect(off.footnote?.contains("a face or fingerprint was added or removed") == true)
        let unenrolled = screens.biometricToggle(for: await session.snapshot, availability: .unavailable(BiometricError(laErrorCode: -7)))
        #expect(!unenrolled.isEnabled)
        #expect(unenrolled.footnote == BiometricError(laErrorCode: -7).message(in: .english, biometry: .none))
        let chinese = BioAuthScreens(language: .simplifiedChinese).biometricToggle(for: await session.snapshot, availability: .available(.touchID))
        #expect(chinese.label == "触控 ID 登录")
    }

    @Test("cancels the user made are not reported back to them; other failures are")
    func messages() {
        let screens = BioAuthScreens(language: .simplifiedChinese)
        #expect(screens.message(for: BiometricError(laErrorCode: -2), biometry: .faceID) == nil)
        #expect(screens.message(for: BiometricError(laErrorCode: -4), biometry: .faceID) == nil)
        #expect(
            screens.message(for: BiometricError(laErrorCode: -8), biometry: .faceID)
                == BiometricError(laErrorCode: -8).message(in: .simplifiedChinese, biometry: .faceID)
        )
        // A cancelled task was the app's choice: nothing to tell. An error the SDK doesn't know gets the generic text.
        #expect(screens.message(for: CancellationError(), biometry: .faceID) == nil)
        #expect(screens.message(for: URLError(.badURL), biometry: .faceID) == "出现问题，请重试。")
    }
}

@Suite("App Attest provider errors")
struct AppAttestProviderErrorTests {
    @Test(
        "DCError codes map to stable codes",
        arguments: [
            (0, "app_attest_failed"), (1, "app_attest_unsupported"), (2, "app_attest_failed"), (3, "app_attest_invalid_key"),
            (4, "app_attest_service_unavailable"), (99, "app_attest_failed"),
        ]
    )
    func deviceCheckCodes(code: Int, expected: String) {
        let error = AppAttestProviderError(deviceCheckCode: code)
        #expect(error.code == expected)
        #expect(error.reason.contains("DCError \(code)"))
    }
}
