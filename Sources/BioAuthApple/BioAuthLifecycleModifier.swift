#if canImport(SwiftUI)
import BioAuthClient
import SwiftUI

/// Feeds SwiftUI's `scenePhase` into an ``AppLock``: from the lock's first appearance (a model's lock exists once its
/// flows are made; until then the lock counts the app as in the background, as the model makes it).
struct BioAuthLifecycleModifier: ViewModifier {
    let lock: AppLock?
    /// Called on the main actor when an event left the session locked.
    var onLocked: (@MainActor @Sendable () -> Void)? = nil
    @Environment(\.scenePhase) private var scenePhase
    @State private var last: AppPhase = .background
    @State private var queue = LifecycleQueue()

    func body(content: Content) -> some View {
        content
            .onAppear { apply(Self.phase(scenePhase)) }
            .onChange(of: scenePhase) { newPhase in apply(Self.phase(newPhase)) }
            .onChange(of: lock != nil) { _ in apply(Self.phase(scenePhase)) }
    }

    private func apply(_ phase: AppPhase) {
        guard let lock else { return }
        queue.enqueue(AppLifecycleEvent.events(from: last, to: phase), to: lock, onLocked: onLocked)
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

extension View {
    /// Feeds this scene's `scenePhase` into `lock`: prompts wait for `.active`; returning after the grace
    /// period locks the app.
    public func bioAuthLifecycle(_ lock: AppLock) -> some View {
        modifier(BioAuthLifecycleModifier(lock: lock))
    }

    /// Feeds this scene's `scenePhase` into the model's app lock (from when its flows are made); when that locks the
    /// session (back after the grace period), the model reads it again, so its lock screen shows.
    @available(iOS 17.0, macOS 14.0, *)
    public func bioAuthLifecycle(_ model: BioAuthModel) -> some View {
        modifier(BioAuthLifecycleModifier(lock: model.appLock, onLocked: { Task { await model.refresh() } }))
    }
}
#endif
