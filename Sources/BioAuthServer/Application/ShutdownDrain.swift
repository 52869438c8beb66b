import Logging
import ServiceLifecycle

/// The first step of a graceful shutdown: readiness fails (`GET /readyz` answers 503 `not_ready`) while the
/// listener stays open and every request is served, for ``ServerConfiguration/shutdownDrain`` seconds. A load
/// balancer or Kubernetes' endpoints controller sees the failing probe and stops sending new requests; only then
/// does the server stop accepting connections and wait for the requests in flight.
///
/// It must come after the application in its service group: a group shuts its services down in reverse order, so
/// this one finishes its drain before the application is told to stop.
struct ShutdownDrain: Service {
    let state: ShutdownState
    let delay: Duration
    let logger: Logger

    func run() async throws {
        do { try await gracefulShutdown() } catch { return }  // cancelled: the group is going down without a drain
        state.beginDraining()
        guard delay > .zero else { return }
        logger.notice("shutting down: readiness fails now; the listener closes after the drain", metadata: ["drain": "\(delay)"])
        try? await Task.sleep(for: delay)
    }
}
