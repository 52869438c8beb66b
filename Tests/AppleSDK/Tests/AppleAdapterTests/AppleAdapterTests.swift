import AppleDeviceSimulation
import AuthenticationServices
import BioAuthAppleUnderTest
import BioAuthClient
import BioAuthCore
import Foundation
import Testing
import UIKit

/// Every suite here drives the one simulated phone of the process, so they run one test at a time.
@Suite("Apple frameworks, simulated", .serialized)
enum SimulatedPhone {}

/// BioAuthApple's adapters, compiled from their own files, run against the framework stand-ins and a scripted phone
/// that behaves as iOS documents. The portable tests assume these behaviours of the adapters; here they are checked
/// through the adapters' real code.
extension SimulatedPhone {
    @Suite("BioAuthApple against the scripted frameworks")
    struct AppleAdapterTests {
        let device = SimulatedDevice.current
        init() { SimulatedDevice.current.reset() }

        static let prompt = BiometricPrompt(policy: .biometrics, reason: "Pay ¥88.00 to Coffee Shop", fallbackTitle: "Use PIN", cancelTitle: "Cancel")

        // MARK: LocalAuthenticator

        @Test("availability is read after canEvaluatePolicy: Face ID, Touch ID, and why biometrics are unavailable")
        func availability() async {
            let authenticator = LocalAuthenticator()
            #expect(await authenticator.availability(for: .biometrics) == .available(.faceID))
            device.biometry = .touchID
            #expect(await authenticator.availability(for: .biometrics) == .available(.touchID))
            device.enrolled = false
            #expect(await authenticator.availability(for: .biometrics) == .unavailable(BiometricError(.biometryNotEnrolled)))
            device.passcodeSet = false
            #expect(await authenticator.availability(for: .biometrics) == .unavailable(BiometricError(.passcodeNotSet)))
            device.biometry = .none
            #expect(await authenticator.availability(for: .biometrics) == .unavailable(BiometricError(.biometryNotAvailable)))
        }

        @Test("a prompt shows its reason and titles; an empty fallback title hides the button, an empty reason never reaches LAContext")
        func promptTitles() async throws {
            let authenticator = LocalAuthenticator()
            let context = try await authenticator.evaluate(Self.prompt)
            #expect(context.biometryKind == .faceID)
            #expect(device.prompts.last == .init(reason: "Pay ¥88.00 to Coffee Shop", fallbackTitle: "Use PIN", cancelTitle: "Cancel"))
            device.script(.fallback)
            await #expect { _ = try await authenticator.evaluate(Self.prompt) } throws: { ($0 as? BiometricError)?.code == .userFallback }
            let hidden = BiometricPrompt(policy: .biometrics, reason: "Unlock", fallbackTitle: "")
            device.script(.fallback)  // there is no button to tap: the user can only cancel
            await #expect { _ = try await authenticator.evaluate(hidden) } throws: { ($0 as? BiometricError)?.code == .userCancel }
            #expect(device.prompts.last?.fallbackTitle == "")
            // LAContext crashes (an Objective-C exception) on an empty reason: the adapter refuses it first.
            await #expect { _ = try await authenticator.evaluate(BiometricPrompt(policy: .biometrics, reason: " ")) } throws: {
                ($0 as? BiometricError)?.code == .invalidPrompt
            }
        }

        @Test("evaluating while the app is not active fails with -1004, notInteractive, and shows nothing")
        func notInteractive() async {
            device.appActive = false
            await #expect { _ = try await LocalAuthenticator().evaluate(Self.prompt) } throws: { ($0 as? BiometricError)?.code == .notInteractive }
            #expect(device.prompts.isEmpty)
        }

        @Test("the fifth failed match locks biometrics (-8) until the passcode is entered")
        func lockout() async throws {
            let authenticator = LocalAuthenticator()
            device.script(.noMatch, .noMatch, .noMatch, .noMatch, .noMatch)
            for attempt in 1...5 {
                await #expect { _ = try await authenticator.evaluate(Self.prompt) } throws: {
                    ($0 as? BiometricError)?.code == (attempt < 5 ? .authenticationFailed : .biometryLockout)
                }
            }
            #expect(await authenticator.availability(for: .biometrics) == .unavailable(BiometricError(.biometryLockout)))
            await #expect { _ = try await authenticator.evaluate(Self.prompt) } throws: { ($0 as? BiometricError)?.code == .biometryLockout }
            // The passcode (device-owner policy) turns biometrics back on.
            device.script(.passcode)
            _ = try await authenticator.evaluate(BiometricPrompt(policy: .deviceOwner, reason: "Enter your passcode to turn Face ID back on"))
            #expect(await authenticator.availability(for: .biometrics) == .available(.faceID))
            #expect(try await authenticator.evaluate(Self.prompt).biometryKind == .faceID)
        }

        @Test("the enrollment fingerprint comes from the evaluated context and changes when a face is added")
        func domainState() async throws {
            let authenticator = LocalAuthenticator()
            let context = try await authenticator.evaluate(Self.prompt)
            let before = try #require(context.domainState)
            #expect(await authenticator.currentDomainState() == before)
            device.changeEnrollment()
            let after = try #require(await authenticator.currentDomainState())
            #expect(after != before)
        }

        // MARK: Keychain

        @Test("the Keychain store keeps items on this device only, updates in place, and maps the Keychain's refusals")
        func keychain() async throws {
            let store = KeychainSecureStore.system(service: "com.bank.app")
            #expect(try await store.data(forKey: "session") == nil)  // errSecItemNotFound is "no value"
            try await store.set(Data("one".utf8), forKey: "session")
            try await store.set(Data("two".utf8), forKey: "session")
            #expect(try await store.data(forKey: "session") == Data("two".utf8))
            #expect(try await store.containsValue(forKey: "session"))
            let item = try #require(device.keychainItem(service: "com.bank.app", account: "session"))
            #expect(item["pdmn"] as? String == "akpu")  // kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
            #expect(item["nleg"] as? Bool == true)  // kSecUseDataProtectionKeychain
            device.failKeychain(-25308)  // errSecInteractionNotAllowed: the device is locked
            await #expect { _ = try await store.data(forKey: "session") } throws: { ($0 as? SecureStoreError)?.code == .accessDenied }
            device.failKeychain(-25293)  // errSecAuthFailed
            await #expect { try await store.set(Data("three".utf8), forKey: "session") } throws: { ($0 as? SecureStoreError)?.code == .accessDenied }
            try await store.removeValue(forKey: "session")
            #expect(try await store.containsValue(forKey: "session") == false)
            try await store.removeValue(forKey: "session")  // removing what is not there is not an error
        }

        @Test("without a passcode nothing can be stored: the refusal says to set a passcode, not 'try again'")
        func keychainWithoutPasscode() async throws {
            device.passcodeSet = false
            let error = await #expect(throws: SecureStoreError.self) {
                try await KeychainSecureStore.system(service: "com.bank.app").set(Data("x".utf8), forKey: "k")
            }
            #expect(error?.code == .passcodeNotSet)
            #expect(error?.recovery == .openSettingsToSetPasscode)
            device.passcodeSet = true
            try? await KeychainSecureStore.system(service: "com.bank.app").set(Data("x".utf8), forKey: "k")
            #expect(try await KeychainSecureStore.system(service: "com.bank.app").data(forKey: "k") == Data("x".utf8))
        }

        // MARK: Secure Enclave

        @Test("a Secure Enclave key signs with the evaluated context (no second prompt) and the signature verifies")
        func secureEnclaveSigns() async throws {
            let authenticator = LocalAuthenticator()
            let keys = HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: KeychainSecureStore.system(service: "com.bank.app"))
            let publicKey = try await keys.createKey(tag: "device")
            let context = try await authenticator.evaluate(Self.prompt)
            let message = Data("BIOAUTH payload".utf8)
            let signature = try await keys.sign(message, tag: "device", context: context)
            #expect(publicKey.isValidSignature(signature, for: message))
            #expect(device.prompts.count == 1)
            #expect(await keys.keyState(tag: "device") == .valid)
        }

        @Test("an enrollment change invalidates the key: reported without a prompt, refused at signing, its record deleted")
        func secureEnclaveInvalidation() async throws {
            let authenticator = LocalAuthenticator()
            let store = KeychainSecureStore.system(service: "com.bank.app")
            let keys = HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: store)
            _ = try await keys.createKey(tag: "device")
            device.changeEnrollment()
            #expect(await keys.keyState(tag: "device") == .invalidated)
            let context = try await authenticator.evaluate(Self.prompt)
            await #expect { _ = try await keys.sign(Data("m".utf8), tag: "device", context: context) } throws: {
                ($0 as? BiometricError)?.code == .keyInvalidated
            }
            #expect(await keys.keyState(tag: "device") == .absent)
        }

        @Test("no Secure Enclave (the Simulator) or no enrollment: the key is not made, with its own code")
        func secureEnclaveUnavailable() async throws {
            let keys = {
                HardwareKeyStore.secureEnclave(authenticator: LocalAuthenticator(), storage: KeychainSecureStore.system(service: "com.bank.app"))
            }
            device.hasSecureEnclave = false
            await #expect { _ = try await keys().createKey(tag: "device") } throws: { ($0 as? BiometricError)?.code == .secureEnclaveUnavailable }
            device.hasSecureEnclave = true
            device.enrolled = false
            await #expect { _ = try await keys().createKey(tag: "device") } throws: { ($0 as? BiometricError)?.code == .biometryNotEnrolled }
        }

        // MARK: App Attest

        @Test(
            "App Attest: a 32-byte key id, attestation and assertion over the client data hash; unsupported, unavailable and unknown keys get their codes"
        )
        func appAttest() async throws {
            let provider = DeviceCheckAppAttestProvider()
            #expect(provider.isSupported)
            let keyID = try await provider.generateKey()
            #expect(keyID.count == 32)
            let hash = Data(repeating: 7, count: 32)
            #expect(try await provider.attestKey(keyID, clientDataHash: hash).suffix(32) == hash)
            #expect(try await provider.generateAssertion(keyID, clientDataHash: hash).suffix(32) == hash)
            await #expect { _ = try await provider.generateAssertion(Data(repeating: 1, count: 32), clientDataHash: hash) } throws: {
                ($0 as? AppAttestProviderError)?.code == "app_attest_invalid_key"
            }
            device.appAttestServerUnavailable = true
            await #expect { _ = try await provider.attestKey(keyID, clientDataHash: hash) } throws: {
                ($0 as? AppAttestProviderError)?.code == "app_attest_service_unavailable"
            }
            device.appAttestSupported = false
            #expect(provider.isSupported == false)
            await #expect { _ = try await provider.generateKey() } throws: { ($0 as? AppAttestProviderError)?.code == "app_attest_unsupported" }
        }

        // MARK: Passkeys

        @Test(
            "passkeys: creation and sign-in ask for user verification, pass the challenge, user handle, allow and exclude lists, and map the sheet's errors"
        )
        func passkeys() async throws {
            let provider = AuthorizationPasskeyProvider { UIWindow() }
            let challenge = Data(repeating: 9, count: 32)
            let userID = Data(repeating: 4, count: 32)
            let created = try await provider.register(
                PasskeyRegistrationRequest(
                    relyingPartyID: "bank.example",
                    challenge: challenge,
                    userID: userID,
                    userName: "alice"
                )
            )
            #expect(created.credentialID == device.passkeys.first?.credentialID && created.attestationObject.suffix(16) == created.credentialID)
            #expect(String(decoding: created.clientDataJSON, as: UTF8.self).contains(#""origin":"https://bank.example""#))
            #expect(
                device.passkeyRequests.last
                    == .init(
                        kind: "registration",
                        relyingPartyID: "bank.example",
                        challenge: challenge,
                        userVerification: "required",
                        credentialIDs: []
                    )
            )

            // The account's passkey is excluded: the system refuses a second one (1006).
            await #expect {
                _ = try await provider.register(
                    PasskeyRegistrationRequest(
                        relyingPartyID: "bank.example",
                        challenge: challenge,
                        userID: userID,
                        userName: "alice",
                        excludedCredentialIDs: [created.credentialID]
                    )
                )
            } throws: { ($0 as? PasskeyProviderError)?.code == PasskeyProviderError.notAllowedCode }

            let signed = try await provider.assert(
                PasskeyAssertionRequest(
                    relyingPartyID: "bank.example",
                    challenge: challenge,
                    allowedCredentialIDs: [created.credentialID]
                )
            )
            #expect(signed.credentialID == created.credentialID && signed.userHandle == userID && signed.signature.suffix(32) == challenge)
            #expect(
                device.passkeyRequests.last?.userVerification == "required" && device.passkeyRequests.last?.credentialIDs == [created.credentialID]
            )

            device.scriptPasskeys(.fail(1001), .fail(1004))
            await #expect { _ = try await provider.assert(PasskeyAssertionRequest(relyingPartyID: "bank.example", challenge: challenge)) } throws: {
                ($0 as? PasskeyProviderError)?.code == PasskeyProviderError.cancelledCode
            }
            await #expect { _ = try await provider.assert(PasskeyAssertionRequest(relyingPartyID: "bank.example", challenge: challenge)) } throws: {
                ($0 as? PasskeyProviderError)?.code == PasskeyProviderError.failedCode
            }
            // No passkey for this relying party on the device.
            await #expect { _ = try await provider.assert(PasskeyAssertionRequest(relyingPartyID: "other.example", challenge: challenge)) } throws: {
                ($0 as? PasskeyProviderError)?.code == PasskeyProviderError.cancelledCode
            }
        }

        // MARK: Diagnostics

        @Test("a Face ID device whose Info.plist lacks NSFaceIDUsageDescription is warned about (iOS would end the app at the prompt)")
        func faceIDUsageDescription() {
            // This test process's Info.plist (Bundle.main) has no NSFaceIDUsageDescription.
            #expect(IntegrationDiagnostics.run(language: .english).map(\.code).contains("missing_face_id_usage_description"))
            // Checked on a Touch ID device too: the same build runs on both kinds.
            device.biometry = .touchID
            #expect(IntegrationDiagnostics.run(language: .english).map(\.code).contains("missing_face_id_usage_description"))
        }
    }
}
