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
    @StateObject private var model = ExampleModel()

    var body: some Scene {
        WindowGroup {
            RootView(model: model)
        }
    }
}

/// Builds the SDK from the real Apple backends.
@MainActor
final class ExampleModel: ObservableObject {
    let language = Language.preferred(from: Locale.preferredLanguages)
    let authenticator = LocalAuthenticator()
    /// The server's API; the flows use the same one.
    lazy var api = BioAuthAPI(serverURL: serverURL)
    @Published var flows: BioAuthFlows?
    @Published var snapshot: SessionSnapshot?
    @Published var message: String?

    /// The server: `BioAuthServerURL` in Info.plist (the Simulator reaches the Mac's loopback).
    var serverURL: URL {
        (Bundle.main.object(forInfoDictionaryKey: "BioAuthServerURL") as? String).flatMap(URL.init(string:))
            ?? URL(string: "http://127.0.0.1:8080")!
    }

    init() {
        IntegrationDiagnostics.run(language: language)
        Task { await start() }
    }

    func start() async {
        let store = KeychainSecureStore.system(service: Bundle.main.bundleIdentifier ?? "bioauth.example")
        let keys = HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: store)
        do {
            let flows = try await BioAuthFlows(
                api: api,
                authenticator: authenticator,
                keyStore: keys,
                store: store,
                configuration: .init(
                    language: language,
                    deviceName: UIDevice.current.name,
                    deviceModel: UIDevice.current.model,
                    appAttest: DeviceCheckAppAttestProvider(),
                    passkeys: AuthorizationPasskeyProvider { Self.keyWindow() }
                ),
                isActive: false
            )
            self.flows = flows
            await refresh()
        } catch {
            message = BioAuthScreens(language: language).message(for: error, biometry: .none)
        }
    }

    /// The window the passkey sheet is presented over: the key window of the app's scene.
    static func keyWindow() -> UIWindow {
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        return scenes.lazy.compactMap(\.keyWindow).first ?? scenes.lazy.flatMap(\.windows).first ?? UIWindow()
    }

    func refresh() async {
        snapshot = await flows?.snapshot
    }

    /// Runs `action`, then shows the new state and any message worth showing.
    func perform(_ action: @escaping @Sendable (BioAuthFlows) async throws -> Void) {
        guard let flows else { return }
        message = nil
        Task {
            do {
                try await action(flows)
            } catch {
                let kind = await authenticator.availability(for: .biometrics).kind
                message = BioAuthScreens(language: language).message(for: error, biometry: kind)
            }
            await refresh()
        }
    }
}
#endif
