import Foundation

// libFuzzer entry: the rule for names shown in prompts. An accepted name is accepted again as it was returned
// (the rule is stable under its own normalization); a fitted name always keeps the rule. The look-alike keys a registry
// keeps unique do not depend on how the name is normalized, its folded key not on its case, and a name whose key is
// its own skeleton's (a skeleton is a fixed point): so no spelling of an accepted name slips past the registry.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDisplayName(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let name) = DisplayName.checked(text, maxCharacters: 64) {
        precondition((try? DisplayName.checked(name, maxCharacters: 64).get()) == name, "an accepted name is refused once normalized")
        let keys = DisplayName.lookalikeKeys(name)
        precondition(DisplayName.lookalikeKeys(text) == keys, "the keys depend on the normalization form")
        precondition(DisplayName.lookalikeKeys(name.decomposedStringWithCanonicalMapping) == keys, "the keys differ in NFD")
        precondition(DisplayName.lookalikeKeys(name.uppercased()).foldedFirst == keys.foldedFirst, "the folded key depends on case")
        precondition(DisplayName.lookalikeKeys(name.lowercased()).foldedFirst == keys.foldedFirst, "the folded key depends on case")
        precondition(DisplayName.skeleton(keys.mappedFirst) == keys.mappedFirst, "a skeleton is not its own skeleton")
    }
    let fitted = DisplayName.fitted(text, maxCharacters: 64, fallback: "iPhone")
    precondition((try? DisplayName.checked(fitted, maxCharacters: 64).get()) == fitted, "a fitted name breaks the rule")
    return 0
}
