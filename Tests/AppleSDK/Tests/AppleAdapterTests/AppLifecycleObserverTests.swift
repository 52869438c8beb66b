import AppleDeviceSimulation
import BioAuthAppleUnderTest
import BioAuthClient
import BioAuthCore
import Foundation
import Testing
@_spi(Simulation) import UIKit

/// `AppLifecycleObserver`'s real code, fed by the notifications the UIKit stand-in posts as iOS does.
extension SimulatedPhone {
    @Suite("AppLifecycleObserver against UIKit's notifications")
    @MainActor
    struct AppLifecycleObserverTests {
        /// A clock the test moves.
        final class TestClock: WallClock, @unchecked Sendable {
            private let lock = NSLock()
            private var time = Date(timeIntervalSince1970: 1_800_000_000)
            var now: Date { lock.withLock { time } }
            func advance(by seconds: TimeInterval) { lock.withLock { time += seconds } }
        }

        /// A signed-in session with biometric sign-in on (a Secure Enclave key through the real adapters), and its lock.
        static func lock(clock: TestClock) async throws -> AppLock {
            SimulatedDevice.current.reset()
            let sensor = LocalAuthenticator()
            let store = KeychainSecureStore.system(service: "com.bank.app")
            let keys = HardwareKeyStore.secureEnclave(authenticator: sensor, storage: store)
            let session = try await SessionMachine(store: store, keyStore: keys)
            try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
            let publicKey = try await keys.createKey(tag: "signin")
            try await session.handle(
                .biometricSignInEnabled(
                    DeviceBinding(
                        accountID: "alice",
                        keyTag: "signin",
                        publicKey: publicKey,
                        biometry: .faceID,
                        enabledAt: Date(timeIntervalSince1970: 0)
                    )
                )
            )
            return AppLock(session: session, authenticator: sensor, keyStore: keys, clock: clock, isActive: false)
        }

        static func eventually(_ condition: () async -> Bool) async throws {
            for _ in 0..<2000 where !(await condition()) { try await Task.sleep(for: .milliseconds(1)) }
            #expect(await condition())
        }

        @Test("launch, background past the grace period, return: the lock follows the notifications and locks once")
        func followsNotifications() async throws {
            let clock = TestClock()
            let lock = try await Self.lock(clock: clock)
            var lockedCount = 0
            let app = UIApplication.shared
            await app.simulateTransition(to: .background)
            let observer = AppLifecycleObserver(lock: lock, onLocked: { lockedCount += 1 })
            await app.simulateTransition(to: .active)
            try await Self.eventually { await lock.isActive }
            await app.simulateTransition(to: .background)
            try await Self.eventually { await !lock.isActive }
            clock.advance(by: 120)
            await app.simulateTransition(to: .active)
            try await Self.eventually { lockedCount == 1 }
            try await Self.eventually { await lock.isActive }
            observer.invalidate()
            await app.simulateTransition(to: .background)
            try await Task.sleep(for: .milliseconds(50))
            #expect(await lock.isActive, "an invalidated observer delivers nothing")
        }
    }
}
