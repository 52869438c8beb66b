import NIOConcurrencyHelpers
import Testing

@testable import BioAuthServer

@Suite("The first of racing outcomes")
struct FirstOutcomeTests {
    struct Refused: Error, Equatable { let reason: String }

    @Test("returns the first value resolved; later ones, values or errors, change nothing")
    func firstValueWins() async throws {
        let answer: String = try await firstOutcome { resolve in
            resolve(.success("first"))
            resolve(.success("second"))
            resolve(.failure(Refused(reason: "late")))
        }
        #expect(answer == "first")
    }

    @Test("throws the first error resolved, even when a value follows")
    func firstErrorWins() async {
        await #expect(throws: Refused(reason: "early")) {
            let _: Int = try await firstOutcome { resolve in
                resolve(.failure(Refused(reason: "early")))
                resolve(.success(1))
            }
        }
    }

    @Test("does not wait for the loser: the caller goes on while the slower task is still running")
    func loserNotAwaited() async throws {
        let loserEnded = NIOLockedValueBox(false)
        var loser: Task<Void, Never>?
        let answer: String = try await firstOutcome { resolve in
            // Runs until the test cancels it, after the wait; a firstOutcome that waited for it would return a minute
            // later with it ended, and fail below rather than hang.
            loser = Task {
                try? await Task.sleep(for: .seconds(60))
                loserEnded.withLockedValue { $0 = true }
                resolve(.success("loser"))
            }
            Task { resolve(.success("winner")) }
        }
        #expect(answer == "winner")
        #expect(!loserEnded.withLockedValue { $0 }, "the wait ended only once the loser had")
        loser?.cancel()
        await loser?.value
    }

    @Test("many tasks resolving at once end the wait exactly once (a second resume would stop the process)")
    func concurrentResolvesResumeOnce() async throws {
        for _ in 0..<200 {
            let answer: Int = try await firstOutcome { resolve in
                for index in 0..<8 { Task { resolve(.success(index)) } }
            }
            #expect((0..<8).contains(answer))
        }
    }
}
