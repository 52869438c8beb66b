import NIOConcurrencyHelpers

/// Waits for the first of several racing outcomes: a piece of work against a time limit, say, where the caller must be
/// able to go on while the loser is still running.
///
/// `start` is called at once with `resolve`, which it hands to whatever may finish the wait (a task, a timer, a
/// callback); `resolve` may be called any number of times, from any thread, and only its first call counts. The value or
/// error of that first call is what this returns or throws. Whatever lost the race is not waited for: cancel it from the
/// code that resolved, if it should stop.
func firstOutcome<R: Sendable>(_ start: (_ resolve: @escaping @Sendable (Result<R, any Error>) -> Void) -> Void) async throws -> R {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
        let waiting = NIOLockedValueBox<CheckedContinuation<R, any Error>?>(continuation)
        start { result in waiting.withLockedValue { $0.take() }?.resume(with: result) }
    }
}
