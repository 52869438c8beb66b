import ArgumentParser
import BioAuthClient

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tells the BioAuth story step by step on simulated phones.",
        discussion: """
            Runs the on-device half of the story: enabling Face ID sign-in, the app lock after a relaunch or a \
            long absence, the payment prompt, lockout and passcode recovery, an enrollment change. The server \
            steps (sign-in challenges, payments, revocation) join when the server is built. Exits non-zero if \
            any step does not behave as told.
            """
    )

    @Option(help: "The language of the story and of the prompts: en or zh-Hans.")
    var language: String = "en"

    @Flag(help: "Also show the legacy flags, prompts and key ids at each step.")
    var verbose = false

    func validate() throws {
        guard Language(matching: language) != nil else {
            throw ValidationError("unknown language \(language); use en or zh-Hans")
        }
    }

    func run() async throws {
        let story = DeviceStory(language: Language(matching: language) ?? .english, verbose: verbose)
        let report = await story.run()
        print(report.summary)
        if !report.allPassed { throw ExitCode(1) }
    }
}
