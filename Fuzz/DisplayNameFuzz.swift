import Foundation

// libFuzzer entry: the rule for names shown in prompts. An accepted name is accepted again as it was returned
// (the rule is stable under its own normalization); a fitted name always keeps the rule.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDisplayName(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let name) = DisplayName.checked(text, maxCharacters: 64) {
        precondition((try? DisplayName.checked(name, maxCharacters: 64).get()) == name, "an accepted name is refused once normalized")
    }
    let fitted = DisplayName.fitted(text, maxCharacters: 64, fallback: "iPhone")
    precondition((try? DisplayName.checked(fitted, maxCharacters: 64).get()) == fitted, "a fitted name breaks the rule")
    return 0
}
