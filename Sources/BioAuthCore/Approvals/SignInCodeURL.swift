import Foundation

/// The URL a web page's sign-in QR code holds: `<origin>/web/q/<code>`, where `origin` is one of the bank's web origins
/// (the server's passkey origins) and `code` is base64url. The server and the app compare a scanned URL with exactly
/// this, so that a live code printed under any other host or path (a phishing page's) is refused: the app refuses it
/// before sending anything, the server refuses it as `qr_code_not_found`.
public enum SignInCodeURL {
    /// The path between the origin and the code.
    public static let path = "/web/q/"

    /// The code of `url` when `url` is exactly `origin + "/web/q/" + code` for one of `origins`, byte for byte, with a code
    /// of 1-256 base64url characters and nothing after it (no query, fragment, slash, other case or percent-escape);
    /// nil for any other URL.
    public static func code(in url: String, origins: [String]) -> String? {
        for origin in origins where !origin.isEmpty && url.hasPrefix(origin + path) {
            let code = url.utf8.dropFirst(origin.utf8.count + path.utf8.count)
            guard (1...256).contains(code.count), code.allSatisfy(isBase64URL) else { return nil }
            return String(decoding: code, as: UTF8.self)
        }
        return nil
    }

    /// `https://` origins whose host is `relyingPartyID` or one of its subdomains: what an app that pins its relying party
    /// accepts when it names no web origins itself. The host is read as the URL gives it (before any port).
    public static func code(in url: String, relyingPartyID: String) -> String? {
        guard !relyingPartyID.isEmpty, url.hasPrefix("https://") else { return nil }
        let rest = url.dropFirst("https://".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let authority = rest[..<slash]
        guard !authority.contains("@"), !authority.contains(":") else { return nil }
        let host = String(authority)
        guard host == relyingPartyID || host.hasSuffix("." + relyingPartyID) else { return nil }
        return code(in: url, origins: ["https://" + host])
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
