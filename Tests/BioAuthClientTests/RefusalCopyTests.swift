import BioAuthCore
import Foundation
import Testing

@testable import BioAuthClient

/// What a customer reads after each refusal the SDK can meet, and what the screen offers: never the generic
/// "Something went wrong", and never "sign in with your password" to someone already signed in.
@Suite("Refusal copy")
struct RefusalCopyTests {
    static let screens = [BioAuthScreens(language: .english), BioAuthScreens(language: .simplifiedChinese)]

    /// One error of every code of every device-side refusal type, with the recovery a screen must offer.
    static let deviceRefusals: [(error: any Error, recovery: RecoveryAction)] =
        SecureStoreError.Code.all.map { code in
            let recovery: RecoveryAction =
                switch code {
                case .passcodeNotSet: .openSettingsToSetPasscode
                case .corruptData: .signInAgain
                case .invalidKey: .updateApp
                default: .retry
                }
            return (SecureStoreError(code, reason: "test"), recovery)
        }
        + SessionError.Code.all.map { code in
            let recovery: RecoveryAction = code == .corruptState ? .signInAgain : .retry
            return (SessionError(code, reason: "test"), recovery)
        }
        + [
            (AppAttestProviderError(deviceCheckCode: 1), .contactBank), (AppAttestProviderError(deviceCheckCode: 3), .none),
            (AppAttestProviderError(deviceCheckCode: 4), .tryLater), (AppAttestProviderError(deviceCheckCode: 0), .retry),
            (PasskeyProviderError(authorizationErrorCode: 1003), .usePassword), (PasskeyProviderError(authorizationErrorCode: 1006), .none),
            (PasskeyProviderError(authorizationErrorCode: 1004), .retry),
        ]

    @Test("every Keychain, session, App Attest and passkey refusal has its own text in both languages and its recovery")
    func everyDeviceRefusal() {
        #expect(Self.deviceRefusals.count == SecureStoreError.Code.all.count + SessionError.Code.all.count + 7)
        for screens in Self.screens {
            let generic = Localizer.string("problem.other", language: screens.language)
            var seen: Set<String> = []
            for (error, recovery) in Self.deviceRefusals {
                let message = screens.message(for: error, biometry: .faceID)
                #expect(message != nil && message != generic, "\(error) \(screens.language)")
                #expect(message.map { !$0.hasPrefix("refusal.") && !$0.contains("%") } == true, "\(error): \(message ?? "")")
                #expect(screens.recovery(for: error) == recovery, "\(error)")
                seen.insert(message ?? "")
            }
            // Distinct causes read distinctly (the two "saved sign-in couldn't be read" share one text on purpose).
            #expect(seen.count == Self.deviceRefusals.count - 1)
        }
    }

    @Test("an iPhone without a passcode: the Keychain's failed add becomes 'set a passcode in Settings', in both languages")
    func noPasscode() async {
        let keychain = KeychainSecureStoreTests.FakeKeychain()
        await keychain.fail("add", with: KeychainStatus.authFailed)
        await keychain.setPasscode(false)
        let store = KeychainSecureStore(backend: keychain)
        let error = await #expect(throws: SecureStoreError.self) { try await store.set(Data("session".utf8), forKey: "session") }
        #expect(error?.code == .passcodeNotSet)
        #expect(error?.code.description == "store_passcode_not_set")
        let english = BioAuthScreens(language: .english)
        #expect(
            english.message(for: error!, biometry: .faceID)
                == "This device has no passcode, so it can't keep your sign-in safe. Set a passcode in Settings, then try again."
        )
        #expect(english.recovery(for: error!) == .openSettingsToSetPasscode)
        #expect(BioAuthScreens(language: .simplifiedChinese).message(for: error!, biometry: .faceID)?.hasPrefix("此设备未设置密码") == true)

        // The same status with a passcode set is what it says: access denied, try again.
        await keychain.setPasscode(true)
        await keychain.fail("add", with: KeychainStatus.authFailed)
        let denied = await #expect(throws: SecureStoreError.self) { try await store.set(Data("session".utf8), forKey: "session") }
        #expect(denied?.code == .accessDenied)
    }

    @Test("the user closing the passkey sheet or a cancelled task shows nothing and offers nothing")
    func silentCancels() {
        for screens in Self.screens {
            #expect(screens.message(for: PasskeyProviderError(authorizationErrorCode: 1001), biometry: .faceID) == nil)
            #expect(screens.recovery(for: PasskeyProviderError(authorizationErrorCode: 1001)) == RecoveryAction.none)
            #expect(screens.message(for: CancellationError(), biometry: .faceID) == nil)
            #expect(screens.recovery(for: CancellationError()) == RecoveryAction.none)
        }
    }

    @Test("a signed-in customer (paying, approving, in settings) is never told to sign in with the password")
    func signedInCopy() {
        let passwordWords = ["password", "sign in", "密码登录", "使用密码继续"]
        for screens in Self.screens {
            for code in BiometricError.Code.all {
                guard let message = screens.message(for: BiometricError(code), biometry: .faceID, signedIn: true) else { continue }
                let lowered = message.lowercased()
                #expect(!passwordWords.contains { lowered.contains($0) }, "\(code) \(screens.language): \(message)")
            }
            for reason in [BiometricSignInOffReason.enrollmentChanged, .keyMissing, .deviceRevoked] {
                let message = reason.message(in: screens.language, biometry: .touchID, signedIn: true).lowercased()
                #expect(!passwordWords.contains { message.contains($0) }, "\(reason) \(screens.language)")
            }
        }
        let english = BioAuthScreens(language: .english)
        // Signed out, the same refusal still points to the password.
        #expect(
            english.message(for: BiometricError(.keyNotFound), biometry: .faceID)
                == "Face ID sign-in isn't set up on this device. Sign in with your password."
        )
        #expect(
            english.message(for: BiometricError(.keyNotFound), biometry: .faceID, signedIn: true)
                == "Face ID isn't turned on in this app on this device. Turn it on in this app's settings, or use your payment PIN if you set one up."
        )
        #expect(
            BioAuthScreens(language: .simplifiedChinese).message(for: BiometricError(.userFallback), biometry: .faceID, signedIn: true)
                == "如已设置支付密码，请使用支付密码继续。"
        )
    }
}
