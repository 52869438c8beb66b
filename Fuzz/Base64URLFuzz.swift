import Foundation

// libFuzzer entry: base64url, the encoding of every binary value on the wire. One value has exactly one spelling.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBase64URL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    // decode(encode(x)) == x for any bytes.
    precondition(Base64URL.decode(Base64URL.encode(bytes)) == bytes, "base64url round trip failed")
    // Any text that decodes is the canonical spelling of what it decodes to.
    let text = String(decoding: bytes, as: UTF8.self)
    if let decoded = Base64URL.decode(text) {
        precondition(Base64URL.encode(decoded) == text, "base64url accepted a non-canonical spelling")
    }
    return 0
}
