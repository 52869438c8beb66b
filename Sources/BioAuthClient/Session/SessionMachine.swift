import Foundation

/// The session state machine: applies ``SessionEvent``s, persists the durable part in a ``SecureStore``
/// before it changes anything in memory, and deletes device keys when biometric sign-in turns off.
///
/// Making a new instance over the same store is a relaunch: the "unlocked now" part starts over.
///
/// ```swift
/// // Partial: assumes store: any SecureStore; keys: any DeviceKeyStore
/// let session = try await SessionMachine(store: store, keyStore: keys)
/// try await session.handle(.passwordSignInSucceeded(accountID: "alice", canOfferBiometricSignIn: true))
/// // session.snapshot.state == .offeringBiometricSignIn
/// ```
public actor SessionMachine {
    /// The default ``SecureStore`` key of the persisted state.
    public static let defaultStorageKey = "bioauth.session"

    private let store: any SecureStore
    private let keyStore: any DeviceKeyStore
    private let storageKey: String
    private var model: SessionModel

    /// Loads the persisted state (a launch).
    ///
    /// - Throws: ``SessionError`` (`corruptState`) when the stored record can't be decoded, or the store's
    ///   ``SecureStoreError``.
    public init(
        store: any SecureStore,
        keyStore: any DeviceKeyStore,
        storageKey: String = defaultStorageKey
    )
        async throws
    {
        self.store = store
        self.keyStore = keyStore
        self.storageKey = storageKey
        var persisted = SessionModel.Persisted()
        if let data = try await store.data(forKey: storageKey) {
            do {
                persisted = try JSONDecoder().decode(SessionModel.Persisted.self, from: data)
            } catch {
                throw SessionError(.corruptState, reason: "the stored session state can't be decoded")
            }
        }
        let launched = SessionModel.launched(from: persisted)
        self.model = launched
        if launched.persisted != persisted { try await save(launched.persisted) }
    }

    /// Deletes the stored state, so the next instance starts signed out with biometric sign-in never offered.
    public static func discardStoredState(
        in store: any SecureStore,
        storageKey: String = defaultStorageKey
    )
        async throws
    {
        try await store.removeValue(forKey: storageKey)
    }

    /// The current state.
    public var state: SessionState { model.state }

    /// The current state with everything the UI needs.
    public var snapshot: SessionSnapshot { model.snapshot }

    /// Applies `event`.
    ///
    /// The new durable state is written before anything changes in memory, so a failing store leaves the
    /// machine as it was. Then device keys of a binding that was turned off are deleted; a deletion that
    /// fails is remembered and retried with every later event.
    ///
    /// - Throws: ``SessionError`` (`invalidTransition`) when `event` makes no sense now (nothing changes), or
    ///   the store's error.
    @discardableResult
    public func handle(_ event: SessionEvent) async throws -> SessionTransition {
        var (next, effects) = try model.applying(event)
        let tags =
            next.persisted.keysToDelete
            + effects.map { effect in
                switch effect {
                case .deleteDeviceKey(let tag): tag
                }
            }
        next.persisted.keysToDelete = tags
        if next.persisted != model.persisted { try await save(next.persisted) }
        let from = model.state
        model = next
        await deletePendingKeys()
        return SessionTransition(from: from, to: model.state, effects: effects)
    }

    private func deletePendingKeys() async {
        guard !model.persisted.keysToDelete.isEmpty else { return }
        var remaining: [String] = []
        for tag in model.persisted.keysToDelete {
            do { try await keyStore.deleteKey(tag: tag) } catch { remaining.append(tag) }
        }
        var persisted = model.persisted
        persisted.keysToDelete = remaining
        // If this save fails the deletions are simply retried later; deleting twice is harmless.
        if (try? await save(persisted)) != nil { model.persisted = persisted }
    }

    private func save(_ persisted: SessionModel.Persisted) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try await store.set(try encoder.encode(persisted), forKey: storageKey)
    }
}

extension SessionMachine {
    /// Checks, without a prompt, that the bound key can still sign. An invalidated key (enrollment changed) or a
    /// missing one turns biometric sign-in off here, with its reason, and throws
    /// ``BiometricError/Code-swift.struct/keyInvalidated`` or ``BiometricError/Code-swift.struct/keyNotFound``.
    func requireUsableKey(_ binding: DeviceBinding, in keyStore: any DeviceKeyStore) async throws {
        switch await keyStore.keyState(tag: binding.keyTag) {
        case .valid:
            return
        case .invalidated:
            try await handle(.enrollmentChanged)
            throw BiometricError(.keyInvalidated)
        case .absent:
            try await handle(.deviceKeyMissing)
            throw BiometricError(.keyNotFound)
        }
    }
}
