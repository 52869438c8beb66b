#if canImport(SwiftUI)
import BioAuthClient
import SwiftUI

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

extension View {
    /// Feeds this scene's `scenePhase` into `lock`: prompts wait for `.active`; returning after the grace
    /// period locks the app.
    public func bioAuthLifecycle(_ lock: AppLock) -> some View {
        modifier(BioAuthLifecycleModifier(lock: lock))
    }
}
#endif
