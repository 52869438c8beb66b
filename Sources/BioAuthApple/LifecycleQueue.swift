import BioAuthClient

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
