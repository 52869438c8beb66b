import ArgumentParser
import BioAuthClient
import BioAuthCore
import Foundation

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "A simulated phone you drive step by step against a running `bioauth serve`.",
        discussion: """
            The phone keeps its state in a folder (plain files: for trying things out, not secure). Give one \
            command to run it in a fresh launch of the app, or none to type commands (or pipe a script) into one \
            running app. Exit status: 0 done, 1 refused (the message says why), 2 usage; for commands read from standard \
            input, the highest of them, so a refused step in a script makes the script fail.

            \(DeviceSession.help)
            """
    )

    @Option(help: "The phone's folder (created if missing).")
    var state: String = "./bioauth-phone"

    @Option(help: "The server (default: the one the phone used last, else http://127.0.0.1:8080; env BIOAUTH_SERVER).")
    var server: String?

    @Option(help: "The sensor of a new phone: faceID, touchID or opticID.")
    var kind: String?

    @Option(help: "The language of prompts and messages: en or zh-Hans.")
    var language: String = "en"

    @Argument(parsing: .captureForPassthrough, help: "One command and its arguments; none to read commands from standard input.")
    var command: [String] = []

    func validate() throws {
        guard Language(matching: language) != nil else { throw ValidationError("unknown language \(language); use en or zh-Hans") }
        if let kind, BiometryKind(rawValue: kind)?.isBiometric != true {
            throw ValidationError("unknown sensor \(kind); use faceID, touchID or opticID")
        }
    }

    /// Whether the words ask only for help. The command's words are passed through to the phone unparsed, so
    /// ArgumentParser never sees `--help` there: it is answered here, before the phone's folder is touched.
    static func asksForHelp(_ command: [String]) -> Bool {
        command.first.map { ["--help", "-h", "help"].contains($0) } ?? false
    }

    func run() async throws {
        if Self.asksForHelp(command) {
            print(Self.helpMessage())
            return
        }
        let phone: SimulatedPhone
        do {
            phone = try SimulatedPhone(
                folder: URL(fileURLWithPath: state),
                kind: kind.flatMap(BiometryKind.init(rawValue:)),
                server: server ?? ProcessInfo.processInfo.environment["BIOAUTH_SERVER"],
                language: Language(matching: language) ?? .english
            )
            try await phone.launch()
        } catch {
            print("✗ the phone could not start: \(error)")
            throw ExitCode(2)
        }
        let session = DeviceSession(
            phone: phone,
            write: { print($0) },
            ask: { question in
                print(question, terminator: "")
                return readLine()
            }
        )
        if !command.isEmpty {
            let status = await session.run(command)
            if status != 0 { throw ExitCode(status) }
            return
        }
        print("BioAuth simulated phone in \(state); type help.")
        let status = await Self.runScript(session, next: { readLine() }, write: { print($0) })
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the commands `next` gives, one a line, until it gives none or `quit`. Returns the highest exit status of
    /// any command (0 done, 1 refused, 2 usage), so a script whose middle step was refused does not end in 0.
    static func runScript(_ session: DeviceSession, next: () -> String?, write: (String) -> Void) async -> Int32 {
        var worst: Int32 = 0
        while let line = next() {
            guard let words = DeviceSession.words(line) else {
                write("usage: unbalanced quotes")
                worst = max(worst, 2)
                continue
            }
            if words.first == "quit" || words.first == "exit" { break }
            if words.isEmpty { continue }
            write("> \(line)")
            worst = max(worst, await session.run(words))
        }
        return worst
    }
}
