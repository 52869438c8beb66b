import Foundation

// libFuzzer entry: the strict JSON scan every JSON request body passes through before it is decoded. It must never
// crash or recurse deeply, and everything it accepts Foundation must read as well — the server is stricter than its
// decoder, never looser. Foundation reads more (trailing commas: found by this fuzzer, and now refused), and refuses
// numbers out of Double's range that are still JSON syntax (`1e999`), the one known exception skipped here.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONMemberNames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let finding = JSONMemberNames.scan(bytes)
    precondition(JSONMemberNames.scan(bytes) == finding, "the scan is not deterministic")
    if finding == .unique, (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) == nil {
        precondition(hasLargeNumber(bytes), "the scan accepted what Foundation's parser refuses")
    }
    return 0
}

/// Whether a number with an exponent or more than 15 digits appears (out of Double's exact range, or of any range).
private func hasLargeNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var digits = 0
    for byte in bytes {
        if (0x30...0x39).contains(byte) {
            digits += 1
            if digits > 15 { return true }
        } else if (byte == 0x65 || byte == 0x45) && digits > 0 {
            return true
        } else if byte != 0x2E {
            digits = 0
        }
    }
    return false
}
