import Foundation

// libFuzzer entry: the `Accept` header parser that decides, before an operation runs, whether its response is
// acceptable (406 otherwise). Any header must get an answer, never a crash; the answer follows the rules below.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAcceptHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let yaml = AcceptHeader.MediaType(type: "application", subtype: "yaml")
    let json = AcceptHeader.accepts(header, .json)
    // Whether a header is well formed does not depend on the media type asked about.
    precondition((json == .malformed) == (AcceptHeader.accepts(header, yaml) == .malformed), "malformed for one type only")
    // An empty list element is ignored: a trailing comma changes nothing (unless a quoted string is left open).
    let quotesClosed = !header.contains("\\") && header.filter({ $0 == "\"" }).count % 2 == 0
    if quotesClosed {
        precondition(AcceptHeader.accepts(header + ",", .json) == json, "a trailing empty element changed the answer")
    }
    // A wildcard after everything else never turns a yes into a no (a more specific range still decides).
    if json == .yes, quotesClosed {
        precondition(AcceptHeader.accepts(header + ", */*", .json) == .yes, "*/* turned acceptance into refusal")
    }
    // A quality value, when it parses, is within 0 to 1 in thousandths.
    if let q = AcceptHeader.qualityValue(Substring(header)) {
        precondition((0...1000).contains(q), "q out of range")
    }
    return 0
}
