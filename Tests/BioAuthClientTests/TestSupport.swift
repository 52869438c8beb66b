import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Testing

/// Polls `condition` (sleeping 1 ms between checks) until it holds; fails after 30 seconds. The limit only stops a
/// test that would hang: the condition follows from the test's own steps, and a machine busy with the rest of the suite
/// may take seconds to get there (2 s was not always enough on two loaded cores).
func waitUntil(_ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while !(await condition()) {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not reached")
            return
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// A phone with a simulated sensor, software keys and an in-memory secure store.
struct TestPhone {
    let sensor: SimulatedAuthenticator
    let keys: SoftwareDeviceKeyStore
    let store: InMemorySecureStore

    init(_ configuration: SimulatedAuthenticator.Configuration = .init()) {
        sensor = SimulatedAuthenticator(configuration)
        keys = SoftwareDeviceKeyStore(authenticator: sensor)
        store = InMemorySecureStore()
    }

    /// A launch of the app: a new machine over the same stored state.
    func launch() async throws -> SessionMachine {
        try await SessionMachine(store: store, keyStore: keys)
    }

    /// Creates the key and the binding as enabling does.
    func makeBinding(account: String = "alice", tag: String = "signin") async throws -> DeviceBinding {
        let publicKey = try await keys.createKey(tag: tag)
        return DeviceBinding(accountID: account, keyTag: tag, publicKey: publicKey, biometry: .faceID, enabledAt: Date(timeIntervalSince1970: 0))
    }

    /// Password sign-in, then 启用.
    func signedInWithBiometrics(account: String = "alice") async throws -> SessionMachine {
        let session = try await launch()
        try await session.handle(.passwordSignInSucceeded(accountID: account, canOfferBiometricSignIn: true))
        try await session.handle(.biometricSignInEnabled(try await makeBinding(account: account)))
        return session
    }
}

func flags(_ session: SessionMachine) async -> String { await session.snapshot.legacyFlags.description }
