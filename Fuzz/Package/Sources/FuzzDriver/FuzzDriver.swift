/// What a libFuzzer harness does with one input: returns 0 (anything else is reserved by libFuzzer).
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzTarget
) -> CInt

/// Hands the process over to libFuzzer's driver, which parses the command line and calls `target` with each input.
///
/// SwiftPM links an executable with `main` defined as `<module>_main`, which a harness compiled as a library (as
/// libFuzzer needs) does not have: each harness defines that symbol and calls this.
public func runLibFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ target: FuzzTarget) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv, target)
}
