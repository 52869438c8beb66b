import Foundation

/// A program or library a test needs from the machine, whether it is here, and what to install when it is not.
///
/// A test that needs tools is enabled by exactly those (`.enabled(if: TestTool.ready(.chromium, .zbar), …)`), and when
/// one is missing it is skipped with a comment saying what to install, never failed: a newcomer's `swift test` on a
/// machine without ZBar is green, with the skip named. `.ci/run` installs every tool and fails when any test was skipped.
public struct TestTool: Sendable, CustomStringConvertible {
    /// What the tool is.
    public let name: String
    /// How to get it on Debian (what `.ci/run` does).
    public let install: String
    private let present: @Sendable () -> Bool

    /// Whether it is on this machine.
    public var available: Bool { present() }

    public var description: String { name }

    init(_ name: String, install: String, present: @escaping @Sendable () -> Bool) {
        self.name = name
        self.install = install
        self.present = present
    }

    init(_ name: String, install: String, executables: [String]) {
        self.init(name, install: install) { executables.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
    }

    /// Headless Chromium and chromedriver (the console, the web sign-in page).
    public static let chromium = TestTool(
        "headless Chromium and chromedriver",
        install: "apt-get install chromium chromium-driver fonts-noto-cjk",
        executables: ["/usr/bin/chromium", "/usr/bin/chromedriver"]
    )
    /// ZBar's `zbarimg`, an independent QR decoder.
    public static let zbar = TestTool("ZBar's zbarimg", install: "apt-get install zbar-tools", executables: ["/usr/bin/zbarimg"])
    /// librsvg's `rsvg-convert`, which renders the server's QR SVGs to PNG.
    public static let librsvg = TestTool(
        "librsvg's rsvg-convert",
        install: "apt-get install librsvg2-bin",
        executables: ["/usr/bin/rsvg-convert"]
    )
    /// ICU's headers and a C compiler, to build the helper that computes ICU's own confusable skeletons.
    public static let icu = TestTool("ICU's headers and a C compiler", install: "apt-get install libicu-dev gcc libc6-dev") {
        FileManager.default.fileExists(atPath: "/usr/include/unicode/uspoof.h")
            && ["/usr/bin/cc", "/usr/local/bin/cc"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }
    /// A PostgreSQL to test against, named by `BIOAUTH_TEST_POSTGRES_URL`.
    public static let postgres = TestTool(
        "PostgreSQL (BIOAUTH_TEST_POSTGRES_URL)",
        install: "apt-get install postgresql; export BIOAUTH_TEST_POSTGRES_URL=$(scripts/test-postgres.sh start)"
    ) { ProcessInfo.processInfo.environment["BIOAUTH_TEST_POSTGRES_URL"]?.isEmpty == false }

    /// Whether every one of `tools` is here.
    public static func ready(_ tools: TestTool...) -> Bool { tools.allSatisfy(\.available) }

    /// What a skip says: the tools missing here and how to install them.
    public static func missing(_ tools: TestTool...) -> String {
        let absent = tools.filter { !$0.available }
        guard !absent.isEmpty else { return "needs " + tools.map(\.name).joined(separator: ", ") }
        return "needs " + absent.map { "\($0.name): \($0.install)" }.joined(separator: "; ")
    }
}
