import Foundation

/// Where the app is, as SwiftUI's `ScenePhase` says it.
public enum AppPhase: String, Hashable, Sendable {
    /// In the foreground and interactive: prompts may be shown.
    case active
    /// In the foreground but not interactive (app switcher, an incoming call, a system alert).
    case inactive
    /// Not visible.
    case background
}

/// The app lifecycle events ``AppLock`` needs, as UIKit posts them.
public enum AppLifecycleEvent: String, Hashable, Sendable {
    /// `UIApplication.didBecomeActiveNotification`.
    case didBecomeActive
    /// `UIApplication.willResignActiveNotification`.
    case willResignActive
    /// `UIApplication.didEnterBackgroundNotification`.
    case didEnterBackground
    /// `UIApplication.willEnterForegroundNotification`.
    case willEnterForeground

    /// The UIKit events that a change of SwiftUI's `scenePhase` from `old` to `new` stands for, in order.
    /// A jump that skips `.inactive` yields both steps.
    public static func events(from old: AppPhase, to new: AppPhase) -> [AppLifecycleEvent] {
        switch (old, new) {
        case (.background, .inactive): [.willEnterForeground]
        case (.background, .active): [.willEnterForeground, .didBecomeActive]
        case (.inactive, .active): [.didBecomeActive]
        case (.active, .inactive): [.willResignActive]
        case (.active, .background): [.willResignActive, .didEnterBackground]
        case (.inactive, .background): [.didEnterBackground]
        case (.active, .active), (.inactive, .inactive), (.background, .background): []
        }
    }
}

extension AppLock {
    /// Feeds one lifecycle event to the lock. `BioAuthApple` calls this from UIKit notifications or from
    /// `scenePhase` changes.
    ///
    /// - Returns: the session state after ``willEnterForeground()`` (`.locked` when the app was away longer
    ///   than the grace period), `nil` for the other events.
    @discardableResult
    public func handle(_ event: AppLifecycleEvent) async throws -> SessionState? {
        switch event {
        case .didBecomeActive:
            didBecomeActive()
            return nil
        case .willResignActive:
            willResignActive()
            return nil
        case .didEnterBackground:
            didEnterBackground()
            return nil
        case .willEnterForeground:
            return try await willEnterForeground()
        }
    }
}
