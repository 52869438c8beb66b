#if canImport(LocalAuthentication)
import BioAuthClient
import Foundation
import LocalAuthentication

/// Debug-time checks of the app's integration.
public enum IntegrationDiagnostics {
    /// Prints `IntegrationCheck`'s warnings for `Bundle.main` in debug builds (no effect in release builds).
    /// Call it once at launch, e.g. in your `App`'s initializer, with the server the app talks to (a test server on
    /// the local network needs `NSLocalNetworkUsageDescription`).
    ///
    /// - Returns: the warnings, also in release builds, for your own tests.
    @discardableResult
    public static func run(language: Language, serverURL: URL? = nil) -> [IntegrationWarning] {
        let context = LAContext()
        var error: NSError?
        let canEvaluate = context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
        let kind = LocalAuthenticationMapping.availability(
            for: .biometrics,
            canEvaluate: canEvaluate,
            errorCode: error?.code,
            biometryTypeRawValue: context.biometryType.rawValue
        ).kind
        let warnings = IntegrationCheck.warnings(
            infoDictionary: Bundle.main.infoDictionary,
            biometry: kind,
            language: language,
            serverURL: serverURL
        )
        #if DEBUG
        for warning in warnings { print("⚠️ \(warning)") }
        #endif
        return warnings
    }
}
#endif
