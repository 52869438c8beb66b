import BioAuthClient
import BioAuthServer
import Foundation
import Testing

@testable import bioauth

@Suite("bioauth device")
struct DeviceCommandTests {
    /// Collects what the phone prints.
    final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func write(_ line: String) { lock.withLock { lines.append(line) } }
        var text: String { lock.withLock { lines.joined(separator: "\n") } }
        func clear() { lock.withLock { lines.removeAll() } }
    }

    /// Runs `body` with a server on loopback and a phone folder.
    static func withServer(_ body: (URL, URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-phone-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await LoopbackTestServer.with { url in try await body(url, folder) }
    }

    /// One launch of the app on the phone in `folder`.
    static func launch(_ folder: URL, server: URL?, output: Output, answers: [String] = []) async throws -> DeviceSession {
        let phone = try SimulatedPhone(folder: folder, kind: nil, server: server?.absoluteString, language: .english)
        try await phone.launch()
        let queue = AnswerQueue(answers)
        return DeviceSession(phone: phone, write: { output.write($0) }, ask: { _ in queue.next() })
    }

    final class AnswerQueue: @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [String]
        init(_ answers: [String]) { self.answers = answers }
        func next() -> String? { lock.withLock { answers.isEmpty ? nil : answers.removeFirst() } }
    }

    @Test("a person drives the phone: sign in, 启用, relaunch, unlock, pay, sign out, Face ID sign-in")
    func walkthrough() async throws {
        try await Self.withServer { server, folder in
            let output = Output()
            var app = try await Self.launch(folder, server: server, output: output)
            #expect(await app.run(["signup", "alice", "correct horse"]) == 0)
            #expect(await app.run(["signin", "alice", "correct horse"]) == 0)
            #expect(output.text.contains("Sign in with Face ID?"))
            #expect(await app.run(["touch", "match"]) == 0)
            #expect(await app.run(["enable-biometrics"]) == 0)
            #expect(await app.run(["set-pin", "258046", "correct horse"]) == 0)
            output.clear()
            #expect(await app.run(["new-payment", "8800", "CNY", "coffee-1"]) == 0)
            let paymentID = try #require(output.text.split(separator: " ").dropFirst(2).first.map { String($0.dropLast()) })
            #expect(output.text.contains("¥88.00 to Coffee Shop"), "the registered name")
            #expect(await app.run(["new-payment", "100", "CNY", "evil-corp"]) == 1, "an unregistered payee")
            output.clear()
            #expect(await app.run(["pending"]) == 0)
            #expect(output.text.contains(paymentID) && output.text.contains("¥88.00 to Coffee Shop"), "\(output.text)")

            // Relaunch: a new run of the app over the same folder is locked; answering at the prompt unlocks it.
            app = try await Self.launch(folder, server: nil, output: output, answers: ["match"])
            output.clear()
            #expect(await app.run(["status"]) == 0)
            #expect(output.text.contains("session: locked"))
            #expect(await app.run(["unlock"]) == 0)
            #expect(output.text.contains("“Unlock with Face ID to continue”") && output.text.contains("✓ unlocked"))
            #expect(await app.run(["touch", "match"]) == 0)
            #expect(await app.run(["pay", paymentID]) == 0)
            #expect(output.text.contains("“Pay ¥88.00 to Coffee Shop”") && output.text.contains("receipt verified"))
            #expect(await app.run(["background"]) == 0)
            #expect(await app.run(["foreground", "45"]) == 0)
            #expect(output.text.contains("in the foreground: locked"))
            #expect(await app.run(["signout"]) == 0)
            #expect(await app.run(["touch", "match"]) == 0)
            #expect(await app.run(["biometric-signin"]) == 0)
            output.clear()
            #expect(await app.run(["status"]) == 0)
            #expect(output.text.contains("session: unlocked") && output.text.contains("biometric sign-in: on (faceID"))
        }
    }

    @Test("a refusal the user caused says what to do, in their words, with its code and recovery (a short password, a weak PIN)")
    func refusalsExplained() async throws {
        try await Self.withServer { server, folder in
            let output = Output()
            let app = try await Self.launch(folder, server: server, output: output)
            #expect(await app.run(["signup", "bob", "short"]) == 1)
            #expect(
                output.text.contains(
                    "A password needs at least 8 characters. Choose a longer one. (invalid_password, HTTP 400; recovery: changeInput)"
                )
            )
            _ = await app.run(["signup", "bob", "correct horse"])
            _ = await app.run(["signin", "bob", "correct horse"])
            #expect(await app.run(["set-pin", "111111", "correct horse"]) == 1)
            #expect(
                output.text.contains("too easy to guess") && output.text.contains("(weak_pin, HTTP 400; recovery: changeInput)"),
                "\(output.text)"
            )
        }
    }

    @Test("a second phone: refused by the password alone, then approved on the first phone with the number it shows")
    func secondPhoneByApproval() async throws {
        try await Self.withServer { server, folder in
            let first = Output()
            let phone = try await Self.launch(folder, server: server, output: first, answers: ["match", "match"])
            _ = await phone.run(["signup", "bob", "correct horse"])
            _ = await phone.run(["signin", "bob", "correct horse"])
            #expect(await phone.run(["enable-biometrics"]) == 0)
            let other = folder.appendingPathComponent("second")
            let second = Output()
            let tablet = try await Self.launch(other, server: server, output: second, answers: ["match", "match"])
            _ = await tablet.run(["signin", "bob", "correct horse"])
            #expect(await tablet.run(["enable-biometrics"]) == 1)
            #expect(second.text.contains("device_binding_required"), "\(second.text)")
            let binding = Task { await tablet.run(["bind-by-approval"]) }
            // The tablet shows its number, then waits; the first phone lists the request and picks that number.
            var number: String?
            for _ in 0..<600 where number == nil {
                number = second.text.split(separator: " ").drop { $0 != "pick" }.dropFirst().first.map(String.init)
                if number == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            first.clear()
            _ = await phone.run(["approvals"])
            let id = try #require(
                first.text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.count == 36 }.map(String.init),
                "\(first.text)"
            )
            #expect(await phone.run(["approve", id, try #require(number)]) == 0, "\(first.text)")
            #expect(await binding.value == 0, "\(second.text)")
            first.clear()
            _ = await phone.run(["devices"])
            #expect(first.text.contains("bound by approval") && first.text.contains("bound by password"), "\(first.text)")
        }
    }

    @Test("non-matching faces are remembered across runs; enrollment change turns sign-in off with the reason")
    func sensorStatePersists() async throws {
        try await Self.withServer { server, folder in
            let output = Output()
            var app = try await Self.launch(folder, server: server, output: output)
            _ = await app.run(["signup", "bob", "correct horse"])
            _ = await app.run(["signin", "bob", "correct horse"])
            _ = await app.run(["touch", "match"])
            #expect(await app.run(["enable-biometrics"]) == 0)
            app = try await Self.launch(folder, server: nil, output: output, answers: ["nomatch", "nomatch", "nomatch", "nomatch", "nomatch"])
            #expect(await app.run(["unlock"]) == 1)
            #expect(await app.run(["unlock"]) == 1)
            #expect(output.text.contains("biometry_lockout; recovery: enterPasscode"))
            app = try await Self.launch(folder, server: nil, output: output)
            output.clear()
            _ = await app.run(["status"])
            #expect(output.text.contains("sensor: faceID, locked out"))
            _ = await app.run(["touch", "passcode"])
            #expect(await app.run(["recover"]) == 0)
            _ = await app.run(["change-enrollment"])
            output.clear()
            #expect(await app.run(["unlock"]) == 1)
            #expect(output.text.contains("key_invalidated"))
            output.clear()
            _ = await app.run(["status"])
            #expect(
                output.text.contains("biometric sign-in: off — Face ID sign-in was turned off because a face or fingerprint was added or removed")
            )
        }
    }

    @Test("refusals exit 1 with the reason; usage errors exit 2; an unreachable server changes nothing")
    func exitCodes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-phone-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = Output()
        let app = try await Self.launch(folder, server: URL(string: "http://127.0.0.1:9"), output: output)
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("store").path).sorted()
        #expect(await app.run(["signin", "alice", "correct horse"]) == 1)
        #expect(output.text.contains("server_unreachable"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("store").path).sorted() == before)
        #expect(await app.run(["frobnicate"]) == 2)
        #expect(await app.run(["signin", "alice"]) == 2)
        #expect(await app.run(["touch", "sideways"]) == 2)
        #expect(await app.run(["new-payment", "88.00", "CNY", "m", "Shop"]) == 2)
        #expect(await app.run(["biometric-signin"]) == 1)
        #expect(DeviceSession.words(#"set-pin 258046 "correct horse""#) == ["set-pin", "258046", "correct horse"])
        #expect(DeviceSession.words(#"signin 'a b' "c"#) == nil)
        #expect(DeviceSession.words(#"x "" y"#) == ["x", "", "y"])
    }

    @Test("--help prints the help and exits 0 without creating the phone's folder", arguments: [["--help"], ["-h"], ["help"]])
    func helpWritesNothing(words: [String]) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-phone-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let command = try DeviceCommand.parse(["--state", folder.path] + words)
        #expect(DeviceCommand.asksForHelp(command.command))
        try await command.run()
        #expect(!FileManager.default.fileExists(atPath: folder.path), "help never writes")
        #expect(!DeviceCommand.asksForHelp(["signin", "alice", "--help"]), "only a command that is help itself")
    }

    @Test("a script's exit status is its worst step's: a refused or mistyped middle step fails the script")
    func scriptStatus() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-phone-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = Output()
        let app = try await Self.launch(folder, server: URL(string: "http://127.0.0.1:9"), output: output)
        func script(_ lines: [String]) async -> Int32 {
            var remaining = lines
            return await DeviceCommand.runScript(app, next: { remaining.isEmpty ? nil : remaining.removeFirst() }, write: output.write)
        }
        #expect(await script(["help", "status"]) == 0)
        #expect(await script(["frobnicate", "help"]) == 2, "a usage error in the middle")
        #expect(await script(["biometric-signin", "help", "status"]) == 1, "a refusal in the middle (no key on this phone)")
        #expect(await script(["help", "\"unbalanced", "help"]) == 2)
        #expect(await script(["help", "quit", "frobnicate"]) == 0, "nothing after quit runs")
    }

    @Test("status says the three old flags in words")
    func statusInWords() {
        let flags = LegacyLoginFlags(loginState: true, startAutoLoginState: true, isAppCurrentLoginState: false)
        #expect(DeviceSession.describe(flags) == "signed in: yes, biometric sign-in on: yes, past the lock on this launch: no")
        #expect(
            DeviceSession.describe(.init(loginState: nil, startAutoLoginState: false, isAppCurrentLoginState: false)).hasPrefix(
                "signed in: not known"
            )
        )
    }
}
