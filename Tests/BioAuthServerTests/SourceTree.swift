import Foundation
import Testing

/// The server's own source files, for the tests that hold the layout to its rules (what may make an HTTP client, what may
/// hold SQL). They read the repository the tests were built from.
enum SourceTree {
    /// `Sources/BioAuthServer`, beside this test target.
    static var server: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/BioAuthServer")
    }

    /// Every Swift file under `folder`, with its path below it and its text.
    static func swiftFiles(under folder: URL = server) throws -> [(path: String, text: String)] {
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)).compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
        return try files.map { file in
            (
                String(file.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1)),
                try String(contentsOf: file, encoding: .utf8)
            )
        }
    }
}
