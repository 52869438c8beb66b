import BioAuthCore
import Testing

@Suite("Sign-in QR code URLs")
struct SignInCodeURLTests {
    let origins = ["https://www.bank.example", "http://localhost:8080"]

    @Test("a code is read only from exactly an origin, /web/q/ and a base64url code")
    func exact() {
        #expect(SignInCodeURL.code(in: "https://www.bank.example/web/q/Ab-_09", origins: origins) == "Ab-_09")
        #expect(SignInCodeURL.code(in: "http://localhost:8080/web/q/x", origins: origins) == "x")
        for url in [
            "https://evil.example/web/q/abc", "https://www.bank.example/web/q/", "https://www.bank.example/web/q/a/b",
            "https://www.bank.example/web/q/a?b", "https://www.bank.example/web/q/a#b", "https://www.bank.example/web/q/a%20",
            "https://WWW.bank.example/web/q/abc", "https://www.bank.example.evil.example/web/q/abc", "abc", "javascript:alert(1)//abc",
            "https://www.bank.example/web/q/" + String(repeating: "a", count: 257), "http://localhost:8081/web/q/abc",
        ] {
            #expect(SignInCodeURL.code(in: url, origins: origins) == nil, "\(url)")
        }
        #expect(SignInCodeURL.code(in: "/web/q/abc", origins: [""]) == nil, "an empty origin matches nothing")
    }

    @Test("by relying party: https on its host or a subdomain, no port or user info")
    func byRelyingParty() {
        #expect(SignInCodeURL.code(in: "https://bank.example/web/q/abc", relyingPartyID: "bank.example") == "abc")
        #expect(SignInCodeURL.code(in: "https://www.bank.example/web/q/abc", relyingPartyID: "bank.example") == "abc")
        for url in [
            "http://www.bank.example/web/q/abc", "https://evilbank.example/web/q/abc", "https://bank.example.evil/web/q/abc",
            "https://bank.example:444/web/q/abc", "https://x@bank.example/web/q/abc", "https://bank.example/other/abc",
            "https://bank.example",
        ] {
            #expect(SignInCodeURL.code(in: url, relyingPartyID: "bank.example") == nil, "\(url)")
        }
        #expect(SignInCodeURL.code(in: "https://bank.example/web/q/abc", relyingPartyID: "") == nil)
    }
}
