import NIOCore

/// Runs a task's jobs on one NIO event loop: a unit of work on PostgreSQL runs on its connection's loop, so each round
/// trip is answered on the thread that will go on with the work.
///
/// Without it, every statement hops from Swift's cooperative pool to the connection's event loop to be written, and its
/// answer hops back: two thread wake-ups per round trip, about a third of the server's CPU per sign-in in a profile.
/// The work between statements (a signature check, JSON) then runs on the event loop, as in any NIO server.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute { job.runSynchronously(on: executor) }
    }
}
