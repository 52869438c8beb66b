/// Where units of work that must hold something (a connection, a row's lock) wait while a test makes its point, so that
/// the test decides when they end instead of a timer.
actor TestGate {
    private(set) var isOpen = false
    private var arrived = 0

    /// Says that one more has arrived and holds what it was to hold.
    func arrive() { arrived += 1 }
    /// Lets every waiter go on.
    func open() { isOpen = true }

    /// Returns once `count` have arrived.
    func waitArrived(_ count: Int) async {
        while arrived < count { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Returns once ``open()`` was called, or after `limit` (which then opens it), so that a test whose point failed
    /// ends instead of hanging.
    func waitOpen(orAfter limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while !isOpen, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        isOpen = true
    }
}
