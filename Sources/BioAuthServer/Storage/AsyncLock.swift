/// A first-come, first-served lock for async code: one holder at a time, across suspension points.
actor AsyncLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` while holding the lock.
    nonisolated func withLock<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()  // the lock passes straight to the next waiter
        }
    }
}
