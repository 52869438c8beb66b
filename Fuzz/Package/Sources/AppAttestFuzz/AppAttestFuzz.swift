import AppAttestVerification
import BioAuthCore
import Dispatch
import Foundation
import FuzzDriver

// libFuzzer entry: the App Attest verifier, on hostile attestations and assertions. The first input byte chooses
// which (even: attestation, odd: assertion); the rest is the object. The context is a real device's, from
// ../shared/vectors/appattest (basd-chiff-2021-04: an attestation and an assertion by the same key), so mutations of
// the seed reach every verification step. Any input must be refused with an AppAttestError or verify; and whatever
// verifies must be that key's, with that assertion's counter: a mutation can only touch what is not signed.

private let keyID = Data(base64Encoded: "AcP/pnpoNVPIJYZOvmIvWzDvmxkFoQCE4Uu7Nk6WiAA=")!
private let clientDataHash = Data(base64Encoded: "bG3abZRG07LuZLR4wUxIg7H22oyjis+IcYLJBltJo6I=")!
private let clientData = Data(base64Encoded: "eyJjaGFsbGVuZ2UiOiJhc3NlcnRpb24tdGVzdCJ9")!
private let appID = "35MFYY2JY5.co.chiff.attestation-test"
private let publicKeyHex =
    "0437c404fa2bbf8fbcf4ee7080573d5fa80c4f6cc3a22f7db43af92c394e7cd1c880c95ab422972625e8e673af1bda2b096654e9b602895601f925bb5941c53082"
private let publicKey = try! DevicePublicKey(
    x963Representation: Data(
        stride(from: 0, to: publicKeyHex.count, by: 2).map { offset in
            let start = publicKeyHex.index(publicKeyHex.startIndex, offsetBy: offset)
            return UInt8(publicKeyHex[start..<publicKeyHex.index(start, offsetBy: 2)], radix: 16)!
        }
    )
)
/// 2021-04-14T09:55:20Z, when the vector's credential certificate became valid.
private let verificationTime = Date(timeIntervalSince1970: 1_618_394_120)
private let verifier = AppAttestVerifier(allowedAppIDs: [appID], environments: [.development, .production])

/// The outcome of an attestation, carried from the verifying task to the fuzzer's thread.
private final class Outcome: @unchecked Sendable {
    var key: AttestedAppKey?
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppAttest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let object = Data(bytes: data + 1, count: size - 1)
    if data[0] & 1 == 0 {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            outcome.key = try? await verifier.verifyAttestation(object, keyID: keyID, clientDataHash: clientDataHash, at: verificationTime)
            done.signal()
        }
        done.wait()
        if let key = outcome.key {
            precondition(key.keyID == keyID && key.publicKey == publicKey, "an attestation verified for another key")
            precondition(key.appID == appID && key.environment == .development, "an attestation verified for another app")
        }
    } else {
        if let counter = try? verifier.verifyAssertion(object, clientData: clientData, key: publicKey, appID: appID, previousCounter: 0) {
            precondition(counter == 3, "an assertion verified with a counter its key did not sign")
        }
    }
    return 0
}

// The executable's entry (see FuzzDriver).
@_cdecl("AppAttestFuzz_main")
public func appAttestFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzAppAttest)
}
