import BioAuthCore
import Testing

@Suite("JSON member names")
struct JSONMemberNamesTests {
    @Test(
        "objects that name a member twice are found at any depth and in any spelling",
        arguments: [
            #"{"a":1,"a":2}"#,
            #"{"a":1,"b":{"c":1,"c":2}}"#,
            #"[{"x":[{"y":1,"y":1}]}]"#,
            #"{"a":1,"\u0061":2}"#,
            #"{"é":1,"e\u0301":2}"#,
            #"{"\ud83d\ude00":1,"😀":2}"#,
            #"{"a" : 1 , "b":[], "a" :null}"#,
        ]
    )
    func duplicates(_ json: String) {
        #expect(JSONMemberNames.scan(Array(json.utf8)) == .duplicate)
    }

    @Test(
        "valid JSON without duplicates passes, including the same name in different objects",
        arguments: [
            #"{}"#, #"[]"#, #"1"#, #"-0.5e+10"#, #""x""#, #"true"#, #"null"#,
            #"{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}"#,
            #"{"A":1,"a":2}"#,
            #" { "s" : "\"\\\/\b\f\n\r\t\u00e9" , "n" : [ 0 , -1.25E-3 , false ] } "#,
            #"{"emoji":"😀","中文":"支付"}"#,
        ]
    )
    func unique(_ json: String) {
        #expect(JSONMemberNames.scan(Array(json.utf8)) == .unique)
    }

    @Test(
        "invalid JSON is reported as such, never as unique",
        arguments: [
            "", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", "-", "1e", "tru", "nul", "\"abc",
            "\"a\u{01}b\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "{\"a\":1} x", "[1 2]", "{\"a\":1 \"b\":2}",
        ]
    )
    func invalid(_ json: String) {
        #expect(JSONMemberNames.scan(Array(json.utf8)) == .invalid)
    }

    @Test("a number out of Double's range is still JSON syntax (found by fuzzing; the decoder refuses its value later)")
    func hugeNumber() {
        #expect(JSONMemberNames.scan(Array(#"{"a":1222e2222}"#.utf8)) == .unique)
        #expect(JSONMemberNames.scan(Array(#"{"a":1222e2222,"a":1}"#.utf8)) == .duplicate)
    }

    @Test("invalid UTF-8 is invalid, in names and in values")
    func invalidUTF8() {
        #expect(JSONMemberNames.scan([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == .invalid)  // {"\xFF":1}
        #expect(JSONMemberNames.scan([0x5B, 0x22, 0xC3, 0x22, 0x5D]) == .invalid)  // ["\xC3"]
    }

    @Test("nesting is bounded without recursion: deep input is invalid, not a crash")
    func depth() {
        let limit = JSONMemberNames.maxDepth
        #expect(JSONMemberNames.scan(Array((String(repeating: "[", count: limit) + String(repeating: "]", count: limit)).utf8)) == .unique)
        #expect(JSONMemberNames.scan(Array((String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)).utf8)) == .invalid)
        #expect(JSONMemberNames.scan(Array(String(repeating: "[{\"a\":", count: 100_000).utf8)) == .invalid)
    }
}
