// The integration docs/APPLE.md shows for a UIKit app, in a main-actor app delegate: `appLock` is read without
// `await` (it is a nonisolated constant of the actor BioAuthFlows). The module is BioAuthApple in an app.
import BioAuthAppleUnderTest
import BioAuthClient
import Foundation

@MainActor
final class AppDelegate {
    private var observer: AppLifecycleObserver?

    func start(flows: BioAuthFlows) {
        observer = AppLifecycleObserver(lock: flows.appLock)
    }

    func makeStore() -> (KeychainSecureStore, HardwareKeyStore) {
        let authenticator = LocalAuthenticator()
        let store = KeychainSecureStore.system(service: "com.bank.app")
        return (store, HardwareKeyStore.secureEnclave(authenticator: authenticator, storage: store))
    }
}
