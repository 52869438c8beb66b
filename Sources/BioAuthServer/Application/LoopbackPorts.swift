/// Free loopback ports for test and demo servers that must get the same port again, or whose port is chosen before the
/// process that binds it starts.
///
/// A port is tried at random in a range below the one the kernel hands out for port 0 (32768 and up on Linux): a port
/// taken from the kernel's range could, between two binds, go to any other socket bound to port 0 (another test's
/// server). Each user takes its own range, so two of them cannot meet either.
public enum LoopbackPorts {
    /// For servers the bench and the tests start in another process (`bioauth serve`).
    public static let childProcesses = 20_000..<32_768
    /// For ``LoopbackWebhookReceiver``, which stops and listens again on its port.
    public static let webhookReceivers = 10_000..<20_000

    /// Calls `bind` with random ports of `range` until it succeeds (100 tries); returns what it returned.
    public static func bindFree<T>(in range: Range<Int>, _ bind: (Int) async throws -> T) async throws -> T {
        var lastError: (any Error)?
        for _ in 0..<100 {
            do {
                return try await bind(Int.random(in: range))
            } catch {
                lastError = error
            }
        }
        throw lastError ?? NoFreePort(range: range)
    }

    /// No port of the range could be bound.
    public struct NoFreePort: Error, CustomStringConvertible {
        let range: Range<Int>
        public var description: String { "no free loopback port in \(range.lowerBound)-\(range.upperBound - 1)" }
    }
}
