#if canImport(UIKit)
import BioAuthClient
import UIKit

/// Feeds UIKit's app lifecycle notifications into an ``AppLock``, so no prompt is shown before the app is
/// active (the -1004 `notInteractive` pitfall) and the app locks after the grace period.
///
/// Keep it alive as long as the lock (for example as a property of your app delegate). For SwiftUI scenes,
/// the `bioAuthLifecycle(_:)` view modifier does the same from `scenePhase`; use one of the two, not both.
///
/// Not available in an app extension (it reads `UIApplication.shared`, which extensions may not use): there, feed
/// `AppLock.handle(_:)` from the extension's own lifecycle, or use `bioAuthLifecycle(_:)` in a SwiftUI extension.
///
/// Not run on a device: compiled on Linux against stand-ins for the SDK's declarations and run against a scripted
/// phone (docs/APPLE.md, "Proven on Linux").
@available(iOSApplicationExtension, unavailable)
@MainActor
public final class AppLifecycleObserver {
    private let lock: AppLock
    private let queue = LifecycleQueue()
    private var tokens: [NSObjectProtocol] = []

    /// Starts observing. `onLocked` runs when coming back to the foreground locked the app.
    public init(lock: AppLock, onLocked: (@MainActor @Sendable () -> Void)? = nil) {
        self.lock = lock
        let center = NotificationCenter.default
        let queue = self.queue
        let events: [(Notification.Name, AppLifecycleEvent)] = [
            (UIApplication.didBecomeActiveNotification, .didBecomeActive),
            (UIApplication.willResignActiveNotification, .willResignActive),
            (UIApplication.didEnterBackgroundNotification, .didEnterBackground),
            (UIApplication.willEnterForegroundNotification, .willEnterForeground),
        ]
        for (name, event) in events {
            tokens.append(
                center.addObserver(forName: name, object: nil, queue: .main) { _ in
                    MainActor.assumeIsolated { queue.enqueue([event], to: lock, onLocked: onLocked) }
                }
            )
        }
        // At launch the app is usually not active yet; if it already is, say so.
        if UIApplication.shared.applicationState == .active {
            queue.enqueue([.didBecomeActive], to: lock, onLocked: nil)
        }
    }

    /// Stops observing.
    public func invalidate() {
        for token in tokens { NotificationCenter.default.removeObserver(token) }
        tokens.removeAll()
    }
}
#endif
