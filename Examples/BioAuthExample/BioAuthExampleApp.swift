#if canImport(SwiftUI) && canImport(UIKit)
import BioAuthApple
import BioAuthClient
import BioAuthCore
import Foundation
import SwiftUI

/// The example app: password sign-in, 启用 / 稍后, the lock screen, Face ID sign-in, passkeys and a ¥88.00
/// payment against `bioauth serve`. See README.md in this folder for how to run it.
@main
struct BioAuthExampleApp: App {
    /// The SDK, made synchronously from the real Apple backends; it makes its flows in the background.
    @State private var model: BioAuthModel
    /// The server's API (the example also asks it for a payment, as the bank's backend would).
    private let api: BioAuthAPI

    init() {
        let language = Language.preferred(from: Locale.preferredLanguages)
        IntegrationDiagnostics.run(language: language, serverURL: Self.serverURL)
        let api = BioAuthAPI(serverURL: Self.serverURL)
        let authenticator = LocalAuthenticator()
        let store = KeychainSecureStore.system(service: Bundle.main.bundleIdentifier ?? "bioauth.example")
        self.api = api
        _model = State(
            initialValue: BioAuthModel(
                api: api,
                authenticator: authenticator,
                keyStore: HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: store),
                store: store,
                configuration: .init(
                    language: language,
                    deviceModel: UIDevice.current.model,
                    appAttest: DeviceCheckAppAttestProvider(),
                    passkeys: AuthorizationPasskeyProvider { Self.keyWindow() }
                )
            )
        )
    }

    var body: some Scene {
        WindowGroup {
            RootView(model: model, api: api).bioAuthLifecycle(model)
        }
    }

    /// The server: `BioAuthServerURL` in Info.plist (the Simulator reaches the Mac's loopback).
    static var serverURL: URL {
        (Bundle.main.object(forInfoDictionaryKey: "BioAuthServerURL") as? String).flatMap(URL.init(string:))
            ?? URL(string: "http://127.0.0.1:8080")!
    }

    /// The window the passkey sheet is presented over: the key window of the app's scene.
    @MainActor static func keyWindow() -> UIWindow {
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        return scenes.lazy.compactMap(\.keyWindow).first ?? scenes.lazy.flatMap(\.windows).first ?? UIWindow()
    }
}
#endif
