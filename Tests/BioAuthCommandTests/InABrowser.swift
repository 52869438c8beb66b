import TestTools
import Testing

/// The suites that drive headless Chromium: one browser at a time, so that two of them never compete with the rest of
/// the tests for the machine's two cores.
@Suite("In a real browser", .enabled(if: TestTool.ready(.chromium), Comment(rawValue: TestTool.missing(.chromium))), .serialized)
enum InABrowser {}
