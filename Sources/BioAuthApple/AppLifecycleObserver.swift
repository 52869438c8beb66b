#if canImport(UIKit) && canImport(SwiftUI)
import BioAuthClient
import SwiftUI
import UIKit

/// Feeds UIKit's app lifecycle notifications into an ``AppLock``, so no prompt is shown before the app is
/// active (the -1004 `notInteractive` pitfall) and the app locks after the grace period.
///
/// Keep it alive as long as the lock (for example as a property of your app delegate). For SwiftUI scenes,
/// the `bioAuthLifecycle(_:)` view modifier does the same from `scenePhase`; use one of the two, not both.
///
/// Not run on a device here: written against Apple's documentation and checked with `swiftc -parse`.
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
                })
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

/// Feeds SwiftUI's `scenePhase` into an ``AppLock``.
struct BioAuthLifecycleModifier: ViewModifier {
    let lock: AppLock
    @Environment(\.scenePhase) private var scenePhase
    @State private var last: AppPhase = .background
    @State private var queue = LifecycleQueue()

    func body(content: Content) -> some View {
        content
            .onAppear { apply(Self.phase(scenePhase)) }
            .onChange(of: scenePhase) { newPhase in apply(Self.phase(newPhase)) }
    }

    private func apply(_ phase: AppPhase) {
        queue.enqueue(AppLifecycleEvent.events(from: last, to: phase), to: lock, onLocked: nil)
        last = phase
    }

    static func phase(_ scenePhase: ScenePhase) -> AppPhase {
        switch scenePhase {
        case .active: .active
        case .inactive: .inactive
        default: .background
        }
    }
}

/// Delivers lifecycle events to the lock one after another, in the order they happened.
@MainActor
final class LifecycleQueue {
    private var tail: Task<Void, Never>?

    func enqueue(_ events: [AppLifecycleEvent], to lock: AppLock, onLocked: (@MainActor @Sendable () -> Void)?) {
        guard !events.isEmpty else { return }
        let previous = tail
        tail = Task { @MainActor in
            await previous?.value
            for event in events {
                let state = try? await lock.handle(event)
                if state == .locked { onLocked?() }
            }
        }
    }
}

extension View {
    /// Feeds this scene's `scenePhase` into `lock`: prompts wait for `.active`; returning after the grace
    /// period locks the app.
    public func bioAuthLifecycle(_ lock: AppLock) -> some View {
        modifier(BioAuthLifecycleModifier(lock: lock))
    }
}
#endif
