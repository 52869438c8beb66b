import Foundation
import Synchronization
import Testing

/// Stops the test process when a test's database or server (``TestDatabase/withOpened(_:connections:logger:_:)``,
/// ``TestServer/run(_:backend:logLevel:logSink:configure:wrapDatabase:_:)``) has not finished within ``limit``, naming
/// the test and the step it stopped in.
///
/// A hang in a test (an `await` that nothing ever resumes) otherwise holds `swift test`, and CI, until CI's own time
/// limit, and says nothing about where it was. Swift Testing's `.timeLimit` cannot end such a test: it cancels the test's
/// task and then waits for it. So a plain thread of its own checks the watched test servers every few seconds; one past
/// its limit is reported on standard error, with every other test server still running, and the process aborts.
enum HangWatchdog {
    /// Far beyond what any test server needs on a loaded CI machine (the slowest take under a minute).
    static let limit: Duration = .seconds(300)

    /// One watched run: its test and the step it is in.
    final class Watch: Sendable {
        fileprivate let test: String
        fileprivate let started = ContinuousClock.now
        private let step = Mutex("starting")

        fileprivate init(test: String) { self.test = test }

        fileprivate func enter(_ step: String) { self.step.withLock { $0 = step } }

        fileprivate var description: String {
            "\(test): \(step.withLock { $0 }) (\(ContinuousClock.now - started) since the database was asked for)"
        }
    }

    private static let running = Mutex<[ObjectIdentifier: Watch]>([:])

    /// The watch of the run this task is part of.
    @TaskLocal private static var current: Watch?

    /// Records the step the current watched run is now in, for the report if it never finishes; nothing outside one.
    static func enter(_ step: String) { current?.enter(step) }

    /// Starts the checking thread, with the first watch (a static's initializer runs once).
    private static let checker: Void = {
        let thread = Thread {
            while true {
                Thread.sleep(forTimeInterval: 5)
                check()
            }
        }
        thread.name = "hang-watchdog"
        thread.start()
    }()

    /// Runs `body` watched, as the current test's; inside a watched run already, just runs it.
    static func watch<T>(_ body: () async throws -> T) async throws -> T {
        if current != nil { return try await body() }
        _ = checker
        let name = Test.current.map { "\($0.sourceLocation.fileID) \($0.name)" } ?? "a test"
        let watch = Watch(test: name)
        running.withLock { $0[ObjectIdentifier(watch)] = watch }
        defer { _ = running.withLock { $0.removeValue(forKey: ObjectIdentifier(watch)) } }
        return try await $current.withValue(watch) { try await body() }
    }

    private static func check() {
        let all = running.withLock { Array($0.values) }
        guard let stuck = all.first(where: { ContinuousClock.now - $0.started > limit }) else { return }
        var report = "HANG: a test database or server has not finished within \(limit): \(stuck.description)\n"
        report += "Test databases and servers still running:\n" + all.map { "  " + $0.description }.joined(separator: "\n") + "\n"
        FileHandle.standardError.write(Data(report.utf8))
        abort()
    }
}
