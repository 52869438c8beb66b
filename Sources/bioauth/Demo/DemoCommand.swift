import ArgumentParser
import BioAuthClient

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tells the BioAuth story step by step on simulated phones.",
        discussion: """
            Starts the server in this process on loopback with a temporary SQLite database, and two simulated \
            phones (Face ID and Touch ID) running the SDK, and the bank's backend as a service client with a \
            webhook receiver: password sign-in and enabling Face ID sign-in (启用), the app lock, biometric sign-in, a replay refused, the \
            backend registering a payee and asking for ¥88.00, paid with Face ID with a verified receipt and a \
            verified payment.authorized webhook, a passkey made and used on the web (it pays nothing), lockout and the passcode, the PIN fallback, an enrollment change, \
            a revoked device. Exits non-zero if any step does not behave as told.
            """
    )

    @Option(help: "The language of the story and of the prompts: en or zh-Hans.")
    var language: String = "en"

    @Flag(help: "Also show every HTTP call and every signed payload.")
    var verbose = false

    func validate() throws {
        guard Language(matching: language) != nil else {
            throw ValidationError("unknown language \(language); use en or zh-Hans")
        }
    }

    func run() async throws {
        let story = DemoStory(language: Language(matching: language) ?? .english, verbose: verbose)
        let report = await story.run()
        print(report.summary)
        if !report.allPassed { throw ExitCode(1) }
    }
}
