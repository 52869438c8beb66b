import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Testing

/// A phone whose device support (or another of the customer's phones, with a fresh Face ID) revoked learns it from the app's own calls:
/// the session machine signs out, and the next "Sign in with Face ID" is refused before any prompt and turns biometric
/// sign-in off with its reason.
@Suite("The phone learns it was revoked")
struct RevokedPhoneEndToEndTests {
    /// Alice's iPad, bound with Face ID, and her iPhone signed in with the password: the iPhone revokes the iPad.
    static func revokedIPad(_ backend: TestBackend) async throws -> (ipad: Phone, flows: BioAuthFlows) {
        let ipad = Phone(backend)
        let flows = try await ipad.enrolled()
        try await backend.revokeAsSupport(customer: "alice")
        return (ipad, flows)
    }

    /// Alice signs in with her password on another phone: revoking her device from there needs a fresh device key that
    /// phone has none of (`step_up_required`, docs/PROTOCOL.md "Step-up"), so support revokes it. That phone's flows.
    static func revokeFromAnotherPhone(_ backend: TestBackend) async throws -> BioAuthFlows {
        let iPhone = Phone(backend)
        let other = try await iPhone.launch()
        _ = try await other.signIn(username: "alice", password: "correct horse")
        let token = try await other.accessToken()
        let device = try #require(try await iPhone.api.devices(accessToken: token).first { $0.revokedAt == nil })
        let refused = await #expect(throws: APIProblem.self) { try await other.revokeDevice(device.id) }
        #expect(refused?.code == .stepUpRequired, "a password alone revokes no phone")
        try await backend.revokeAsSupport(customer: "alice")
        return other
    }

    @Test("the app's own call is told session_ended; reported, the flows sign out, and Face ID sign-in is refused before a prompt and turned off")
    func reportedProblem() async throws {
        try await TestBackend.run { backend in
            let (ipad, flows) = try await Self.revokedIPad(backend)
            let told = await #expect(throws: APIProblem.self) {
                _ = try await ipad.api.devices(accessToken: try await flows.accessToken())
            }
            let problem = try #require(told)
            #expect(problem.code == .sessionEnded)
            // Before the fix the flows still believed they were signed in: "already signed in" to Face ID sign-in.
            #expect(await flows.snapshot.state == .unlocked, "nothing has told the flows yet")
            #expect(try await flows.report(problem), "the report signs out")
            let snapshot = await flows.snapshot
            #expect(snapshot.state == .signedOut && snapshot.canSignInWithBiometrics, "biometric sign-in stays, to be asked about")
            await #expect(throws: APIProblem.self) { _ = try await flows.accessToken() }

            await ipad.sensor.script(.match)
            let refused = await #expect(throws: APIProblem.self) { try await flows.signInWithBiometrics() }
            #expect(refused?.code == .deviceRevoked)
            #expect(await ipad.sensor.queuedOutcomes.count == 1, "no Face ID prompt for a revoked device")
            #expect(await flows.snapshot.biometricSignIn == .turnedOff(reason: .deviceRevoked))
            #expect(try await flows.report(problem) == false, "reporting again changes nothing")
        }
    }

    @Test(
        "the app's own networking reports status and body: a BioAuth problem as such; a bare 401 checked with the server; token_expired refreshes next time; anything else changes nothing"
    )
    func reportedResponse() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            let first = try await flows.accessToken()
            // The bank's backend refuses for its own reason, with its own body: the session is live, so nothing changes.
            #expect(try await flows.report(status: 401, body: Data(#"{"error":"invalid_token"}"#.utf8)) == false)
            #expect(try await flows.report(status: 403, body: Data(#"{"code":"insufficient_scope","detail":"x"}"#.utf8)) == false)
            #expect(try await flows.report(status: 500, body: Data("<html>".utf8)) == false)
            #expect(await flows.snapshot.state == .unlocked)
            // token_expired from the bank (its clock ahead of the phone's): the next token is a fresh one.
            #expect(try await flows.report(status: 401, body: Data(#"{"code":"token_expired"}"#.utf8)) == false)
            let second = try await flows.accessToken()
            #expect(second != first, "refreshed")
            #expect(await flows.snapshot.state == .unlocked)
            _ = try await phone.api.devices(accessToken: second)

            // Another phone revokes this one: the bank's bare 401 is checked with BioAuth's server, which says it ended.
            let other = try await Self.revokeFromAnotherPhone(backend)
            let token = try await other.accessToken()
            #expect(try await flows.report(status: 401, body: Data()), "checked: the session ended")
            #expect(await flows.snapshot.state == .signedOut)
            #expect(try await other.accessToken() == token, "the other phone's session goes on")
        }
    }

    @Test("a reported device_revoked signs out and turns biometric sign-in off at once; device_not_found (maybe another device's) changes nothing")
    func reportedDeviceRevoked() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            #expect(try await flows.report(APIProblem(.deviceNotFound, status: 404, detail: "x")) == false)
            #expect(await flows.snapshot.state == .unlocked)
            #expect(try await flows.report(status: 403, body: Data(#"{"code":"device_revoked","detail":"revoked"}"#.utf8)))
            let snapshot = await flows.snapshot
            #expect(snapshot.state == .signedOut && snapshot.biometricSignIn == .turnedOff(reason: .deviceRevoked), "\(snapshot)")
        }
    }

    @Test("BioAuthModel reports what the app's own call met: the model shows signed out, and says so")
    @MainActor
    func modelReports() async throws {
        try await TestBackend.run { backend in
            let ipad = Phone(backend)
            let model = ModelEndToEndTests.model(ipad)
            _ = await model.createAccount(username: "alice", password: "correct horse")
            #expect(await model.signIn(username: "alice", password: "correct horse"))
            await ipad.sensor.script(.match)
            #expect(await model.enableBiometricSignIn())
            #expect(model.snapshot?.state == .unlocked)
            try await backend.revokeAsSupport(customer: "alice")

            let api = ipad.api
            let devices = await model.perform { flows in try await api.devices(accessToken: try await flows.accessToken()) }
            #expect(devices == nil && model.snapshot?.state == .signedOut, "\(String(describing: model.snapshot))")
            #expect(
                model.message != nil && model.signInButton != nil,
                "signed out, with Face ID sign-in offered: \(String(describing: model.message))"
            )
            #expect(await model.report(status: 401, body: Data(#"{"code":"session_ended"}"#.utf8)) == false, "already signed out")
        }
    }
}
