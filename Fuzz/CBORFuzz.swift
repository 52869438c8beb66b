import Foundation

// libFuzzer entry: the CBOR decoder that reads App Attest attestations and assertions. Any input must decode or
// be refused with a CBORError; never crash, hang or exhaust memory (depth, size and item limits).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBOR(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    if let decoded = try? CBORDecoder().decode(input) {
        // Decoding is a function of the bytes: the same input decodes the same way.
        precondition((try? CBORDecoder().decode(input)) == decoded, "CBOR decoding is not deterministic")
    }
    return 0
}
