import BioAuthClient
import Foundation
import Testing

/// The Keychain store's logic over a keychain that answers with real `OSStatus` codes.
@Suite("Keychain secure store")
struct KeychainSecureStoreTests {
    /// A keychain in memory. `protected` items need user interaction to read; `failNext` makes the next call
    /// of an operation return that status; `racingAdd` adds the item between our update and add.
    actor FakeKeychain: KeychainBackend {
        var items: [String: Data] = [:]
        var protected: Set<String> = []
        var failNext: [String: Int32] = [:]
        var racingAdd = false
        var passcodeSet = true
        var calls: [String] = []

        func fail(_ operation: String, with status: Int32) { failNext[operation] = status }
        func protect(_ account: String, _ data: Data) {
            items[account] = data
            protected.insert(account)
        }
        func raceNextAdd() { racingAdd = true }
        func setPasscode(_ set: Bool) { passcodeSet = set }
        func isPasscodeSet() async -> Bool { passcodeSet }

        private func injected(_ operation: String) -> Int32? {
            calls.append(operation)
            return failNext.removeValue(forKey: operation)
        }

        func copyData(account: String) async -> (status: Int32, data: Data?) {
            if let status = injected("copy") { return (status, nil) }
            if protected.contains(account) { return (KeychainStatus.interactionNotAllowed, nil) }
            guard let data = items[account] else { return (KeychainStatus.itemNotFound, nil) }
            return (KeychainStatus.success, data)
        }
        func probe(account: String) async -> Int32 {
            if let status = injected("probe") { return status }
            if protected.contains(account) { return KeychainStatus.interactionNotAllowed }
            return items[account] == nil ? KeychainStatus.itemNotFound : KeychainStatus.success
        }
        func add(account: String, data: Data) async -> Int32 {
            if let status = injected("add") { return status }
            if racingAdd {
                racingAdd = false
                items[account] = Data("theirs".utf8)
            }
            if items[account] != nil { return KeychainStatus.duplicateItem }
            items[account] = data
            return KeychainStatus.success
        }
        func update(account: String, data: Data) async -> Int32 {
            if let status = injected("update") { return status }
            guard items[account] != nil else { return KeychainStatus.itemNotFound }
            items[account] = data
            return KeychainStatus.success
        }
        func delete(account: String) async -> Int32 {
            if let status = injected("delete") { return status }
            return items.removeValue(forKey: account) == nil ? KeychainStatus.itemNotFound : KeychainStatus.success
        }
    }

    let keychain = FakeKeychain()
    var store: KeychainSecureStore { KeychainSecureStore(backend: keychain) }

    @Test("set adds, set again replaces in place, remove twice is fine")
    func roundTrip() async throws {
        #expect(try await store.data(forKey: "session") == nil)
        try await store.set(Data("one".utf8), forKey: "session")
        try await store.set(Data("two".utf8), forKey: "session")
        #expect(try await store.data(forKey: "session") == Data("two".utf8))
        #expect(await keychain.items.count == 1)
        try await store.removeValue(forKey: "session")
        try await store.removeValue(forKey: "session")
        #expect(try await store.data(forKey: "session") == nil)
    }

    @Test("an item added by someone else between update and add is updated, not lost")
    func racingWriter() async throws {
        await keychain.raceNextAdd()
        try await store.set(Data("mine".utf8), forKey: "session")
        #expect(await keychain.items["session"] == Data("mine".utf8))
        #expect(await keychain.calls == ["update", "add", "update"])
    }

    @Test("the existence check never prompts: a protected item counts as present")
    func existenceWithoutPrompt() async throws {
        await keychain.protect("binding", Data("x".utf8))
        #expect(try await store.containsValue(forKey: "binding"))
        #expect(try await store.containsValue(forKey: "missing") == false)
        #expect(await keychain.calls == ["probe", "probe"])
        await #expect(throws: SecureStoreError(.accessDenied, reason: "")) { _ = try await store.data(forKey: "binding") }
    }

    @Test(
        "result codes become stable errors without the item's data",
        arguments: [
            (KeychainStatus.missingEntitlement, SecureStoreError.Code.accessDenied),
            (KeychainStatus.interactionNotAllowed, .accessDenied),
            (KeychainStatus.userCanceled, .accessDenied),
            (KeychainStatus.decode, .corruptData),
            (KeychainStatus.notAvailable, .ioFailure),
            (Int32(-50), .ioFailure),
        ]
    )
    func statuses(status: Int32, code: SecureStoreError.Code) async throws {
        try await store.set(Data("secret-token".utf8), forKey: "tokens")
        for operation in ["copy", "update", "delete", "probe"] {
            await keychain.fail(operation, with: status)
            do {
                switch operation {
                case "copy": _ = try await store.data(forKey: "tokens")
                case "update": try await store.set(Data("new".utf8), forKey: "tokens")
                case "delete": try await store.removeValue(forKey: "tokens")
                default: _ = try await store.containsValue(forKey: "tokens")
                }
                if !(operation == "probe" && status == KeychainStatus.interactionNotAllowed) {
                    Issue.record("\(operation) with \(status) did not fail")
                }
            } catch let error as SecureStoreError {
                #expect(error.code == code)
                #expect(error.reason.contains("\(status)"))
                #expect(!error.reason.contains("secret-token"))
            }
        }
        #expect(await keychain.items["tokens"] == Data("secret-token".utf8))
    }

    @Test("bad keys are refused before the keychain is touched")
    func badKeys() async throws {
        await #expect(throws: SecureStoreError(.invalidKey, reason: "")) { try await store.set(Data(), forKey: "a/b") }
        #expect(await keychain.calls.isEmpty)
    }
}
