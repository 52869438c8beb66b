import ArgumentParser
import BioAuthServer
import Foundation
import Logging

/// Every setting of `bioauth serve`, in one table: its name, how its text is read, and where it goes in
/// ``ServerConfiguration``. Each has three spellings: the config file's key (`signinChallengeLimit`), the environment
/// variable (`BIOAUTH_SIGNIN_CHALLENGE_LIMIT`, from the key) and the command-line option (`--signin-challenge-limit`).
/// A value given on the command line wins over the environment, which wins over the config file, which wins over the
/// default. A value that cannot be read stops start-up with a message naming where it came from.
enum ServerSettings {
    /// Where a setting's value came from.
    enum Source: Equatable, CustomStringConvertible {
        /// `derived`: a default that follows from other settings, with the reason (`"default: …"`).
        case defaultValue
        case derived(String)
        case file(path: String, key: String)
        case environment(String)
        case flag(String)
        var description: String {
            switch self {
            case .defaultValue: "default"
            case .derived(let reason): "default: \(reason)"
            case .file(let path, let key): "config file \(path): \(key)"
            case .environment(let name): name
            case .flag(let name): name
            }
        }
    }

    /// One setting.
    struct Setting {
        /// The config file's key; the environment variable and the option derive from it.
        let key: String
        /// Whether its value is shown redacted by `--print-config`.
        var secret = false
        /// Reads `text` into the configuration; throws a reason (`"must be a whole number"`) when it cannot.
        let apply: (inout ServerConfiguration, String) throws(Reason) -> Void
        /// The value as `--print-config` shows it.
        let show: (ServerConfiguration) -> String

        /// `BIOAUTH_` and the key in upper snake case.
        var environmentName: String { "BIOAUTH_" + Self.words(key).map { $0.uppercased() }.joined(separator: "_") }
        /// `--` and the key in kebab case.
        var optionName: String { "--" + Self.words(key).joined(separator: "-") }

        /// `signinChallengeLimit` → `signin`, `challenge`, `limit`.
        private static func words(_ key: String) -> [String] {
            var words: [String] = [""]
            for character in key {
                if character.isUppercase { words.append("") }
                words[words.count - 1].append(character.lowercased())
            }
            return words
        }
    }

    /// Why a value cannot be read.
    struct Reason: Error { let text: String }

    // MARK: Kinds of value

    private static func integer(_ key: String, _ path: WritableKeyPath<ServerConfiguration, Int>) -> Setting {
        Setting(
            key: key,
            apply: { configuration, text throws(Reason) in
                guard let value = Int(text) else { throw Reason(text: "must be a whole number") }
                configuration[keyPath: path] = value
            },
            show: { String($0[keyPath: path]) }
        )
    }

    /// Seconds, or with `scale` another unit (86 400 for days).
    private static func seconds(_ key: String, _ path: WritableKeyPath<ServerConfiguration, TimeInterval>, scale: Double = 1) -> Setting {
        Setting(
            key: key,
            apply: { configuration, text throws(Reason) in
                guard let value = Double(text), value.isFinite else { throw Reason(text: "must be a number") }
                configuration[keyPath: path] = value * scale
            },
            show: { formatted($0[keyPath: path] / scale) }
        )
    }

    /// The port of an optional listener; `unset` is what `--print-config` shows without one.
    private static func optionalPort(_ key: String, _ path: WritableKeyPath<ServerConfiguration, Int?>, unset: String) -> Setting {
        Setting(
            key: key,
            apply: { configuration, text throws(Reason) in
                guard let port = Int(text) else { throw Reason(text: "must be a whole number") }
                configuration[keyPath: path] = port
            },
            show: { $0[keyPath: path].map(String.init) ?? unset }
        )
    }

    private static func text(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String>) -> Setting {
        Setting(key: key, apply: { configuration, text throws(Reason) in configuration[keyPath: path] = text }, show: { $0[keyPath: path] })
    }

    /// A comma-separated list; blanks around items and empty items are dropped.
    private static func list(_ key: String, _ path: WritableKeyPath<ServerConfiguration, [String]>) -> Setting {
        Setting(
            key: key,
            apply: { configuration, text throws(Reason) in
                configuration[keyPath: path] = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            },
            show: { $0[keyPath: path].joined(separator: ",") }
        )
    }

    private static func choice<Value: RawRepresentable & CaseIterable>(
        _ key: String,
        _ path: WritableKeyPath<ServerConfiguration, Value>
    ) -> Setting where Value.RawValue == String {
        Setting(
            key: key,
            apply: { configuration, text throws(Reason) in
                guard let value = Value(rawValue: text.lowercased()) else {
                    let names = Value.allCases.map(\.rawValue)
                    throw Reason(text: "must be " + names.dropLast().joined(separator: ", ") + " or " + (names.last ?? ""))
                }
                configuration[keyPath: path] = value
            },
            show: { $0[keyPath: path].rawValue }
        )
    }

    private static func formatted(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    // MARK: The table

    /// Every setting, in the order `--print-config` shows them.
    static var all: [Setting] {
        [
            text("host", \.host),
            integer("port", \.port),
            Setting(
                key: "database",
                secret: true,
                apply: { configuration, text throws(Reason) in configuration.databasePath = text },
                show: { redactedDatabaseLocation($0.databasePath) }
            ),
            integer("databaseConnections", \.databaseConnections),
            Setting(
                key: "logLevel",
                apply: { configuration, text throws(Reason) in
                    guard let level = Logger.Level(rawValue: text.lowercased()) else {
                        throw Reason(text: "must be trace, debug, info, notice, warning, error or critical")
                    }
                    configuration.logLevel = level
                },
                show: { $0.logLevel.rawValue }
            ),
            choice("logFormat", \.logFormat),
            optionalPort("metricsPort", \.metricsPort, unset: "off"),
            text("metricsHost", \.metricsHost),
            text("rpId", \.relyingPartyID),
            integer("bcryptCost", \.bcryptCost),
            integer("passwordHashingThreads", \.passwordHashingThreads),
            text("receiptKey", \.receiptKeyPath),
            text("pinKey", \.pinKeyPath),
            seconds("accessTokenLifetime", \.accessTokenLifetime),
            seconds("refreshTokenLifetime", \.refreshTokenLifetime),
            seconds("loginChallengeLifetime", \.loginChallengeLifetime),
            seconds("registrationChallengeLifetime", \.registrationChallengeLifetime),
            seconds("paymentLifetime", \.paymentLifetime),
            seconds("serviceTokenLifetime", \.serviceTokenLifetime),
            seconds("approvalLifetime", \.approvals.lifetime),
            integer("approvalMaxPending", \.approvals.maxPendingPerCustomer),
            integer("approvalRequestsPerCustomer", \.approvals.requestsPerCustomer),
            choice("firstDeviceBinding", \.binding.firstDevice),
            seconds("bindingCodeLifetime", \.binding.codeLifetime),
            seconds("coolingOff", \.binding.coolingOff),
            integer("coolingOffPaymentLimit", \.binding.coolingOffPaymentLimit),
            seconds("stepUpLifetime", \.stepUpLifetime),
            integer("maxFailedPasswordAttempts", \.maxFailedPasswordAttempts),
            seconds("accountLockDuration", \.accountLockDuration),
            integer("maxFailedPaymentAttempts", \.maxFailedPaymentAttempts),
            integer("maxFailedPinAttempts", \.maxFailedPINAttempts),
            seconds("pinLockDuration", \.pinLockDuration),
            integer("signinChallengeLimit", \.signInChallengesPerWindow),
            integer("signinClientLimit", \.signInChallengesPerClient),
            integer("serviceTokenRequestLimit", \.serviceTokenRequestsPerClient),
            integer("clientAuthFailureLimit", \.clientAuthenticationFailuresPerAddress),
            seconds("rateLimitWindow", \.rateLimitWindow),
            list("trustedProxies", \.trustedProxies),
            integer("maxRequestBodySize", \.maxRequestBodySize),
            seconds("shutdownTimeout", \.shutdownTimeout),
            seconds("shutdownDrain", \.shutdownDrain),
            seconds("retentionInterval", \.retention.interval),
            seconds("tokenRetentionDays", \.retention.tokens, scale: 86_400),
            seconds("auditRetentionDays", \.retention.auditEvents, scale: 86_400),
            seconds("idempotencyKeyRetentionHours", \.retention.idempotencyKeys, scale: 3600),
            seconds("webhookRetentionDays", \.retention.webhookEvents, scale: 86_400),
            seconds("retentionBatchRest", \.retention.batchRest),
            // Unset, the batch size is the engine's (RetentionPolicy.defaultBatchSize(for:)): shown as the one the configured
            // database gets.
            Setting(
                key: "retentionBatchSize",
                apply: { configuration, text throws(Reason) in
                    guard let value = Int(text) else { throw Reason(text: "must be a whole number") }
                    configuration.retention.batchSize = value
                },
                show: { String($0.retention.batchSize(on: DatabaseDialect(location: $0.databasePath))) }
            ),
            seconds("webhookPollInterval", \.webhooks.pollInterval),
            seconds("webhookTimeout", \.webhooks.timeout),
            seconds("webhookRetryBase", \.webhooks.retryBase),
            seconds("webhookRetryWindowHours", \.webhooks.retryWindow, scale: 3600),
            seconds("webhookRotationOverlapHours", \.webhooks.rotationOverlap, scale: 3600),
            list("outboundAllow", \.outbound.allowed),
            choice("appAttest", \.appAttest.mode),
            list("appAttestAppIds", \.appAttest.allowedAppIDs),
            Setting(
                key: "appAttestEnvironment",
                apply: { configuration, text throws(Reason) in
                    switch text.lowercased() {
                    case "production": configuration.appAttest.environments = [.production]
                    case "development": configuration.appAttest.environments = [.development]
                    case "both": configuration.appAttest.environments = [.production, .development]
                    default: throw Reason(text: "must be production, development or both")
                    }
                },
                show: {
                    $0.appAttest.environments.count == 2 ? "both" : $0.appAttest.environments.first == .development ? "development" : "production"
                }
            ),
            Setting(
                key: "console",
                apply: { configuration, text throws(Reason) in
                    guard let value = ["true": true, "false": false][text.lowercased()] else { throw Reason(text: "must be true or false") }
                    configuration.consoleEnabled = value
                },
                show: { String($0.consoleEnabled) }
            ),
            optionalPort("consolePort", \.consolePort, unset: "off (on the API's listener)"),
            text("consoleHost", \.consoleHost),
            seconds("consoleIdleTimeout", \.consoleIdleTimeout),
            seconds("consoleSessionLifetime", \.consoleSessionLifetime),
            text("consoleTotpIssuer", \.consoleTOTPIssuer),
            text("consoleTimeZone", \.consoleTimeZone),
            list("passkeyOrigins", \.passkeys.origins),
            Setting(
                key: "passkeyRpId",
                apply: { configuration, text throws(Reason) in
                    configuration.passkeys.relyingPartyID = text.isEmpty ? nil : text
                },
                show: { $0.passkeys.resolvedRelyingPartyID }
            ),
            text("passkeyRpName", \.passkeys.relyingPartyName),
            Setting(
                key: "passkeyAttestation",
                apply: { configuration, text throws(Reason) in
                    switch text.lowercased() {
                    case "none": configuration.passkeys.requireTrustedAttestation = false
                    case "require": configuration.passkeys.requireTrustedAttestation = true
                    default: throw Reason(text: "must be none or require")
                    }
                },
                show: { $0.passkeys.requireTrustedAttestation ? "require" : "none" }
            ),
            Setting(
                key: "passkeyAttestationRoots",
                apply: { configuration, text throws(Reason) in
                    do { configuration.passkeys.attestationRoots = try PasskeyPolicy.attestationRoots(parsing: text) } catch let error
                        as ConfigurationError
                    {
                        throw Reason(text: error.message)
                    } catch {
                        throw Reason(text: "could not be read")
                    }
                },
                show: { policy in
                    policy.passkeys.attestationRoots.keys.sorted().map { "\($0)=\(policy.passkeys.attestationRoots[$0]?.count ?? 0) certificates" }
                        .joined(separator: ",")
                }
            ),
            Setting(
                key: "passkeyWeb",
                apply: { configuration, text throws(Reason) in
                    guard let value = ["true": true, "false": false][text.lowercased()] else { throw Reason(text: "must be true or false") }
                    configuration.passkeys.webPageEnabled = value
                },
                show: { String($0.passkeys.webPageEnabled) }
            ),
            Setting(
                key: "appAttestAllowPin",
                apply: { configuration, text throws(Reason) in
                    guard let value = ["true": true, "false": false][text.lowercased()] else { throw Reason(text: "must be true or false") }
                    configuration.appAttest.allowsPINPaymentsUnderRequire = value
                },
                show: { String($0.appAttest.allowsPINPaymentsUnderRequire) }
            ),
        ]
    }

    // MARK: Reading

    /// The configuration from `flags` (by key: the options given), then `environment`, then the config file (its path
    /// from `--config` or `BIOAUTH_CONFIG`), then the defaults; checked with ``ServerConfiguration/validate()``. Also
    /// says where each value came from.
    static func resolve(
        flags: [String: String],
        configFile: String?,
        environment: [String: String]
    ) throws -> (configuration: ServerConfiguration, sources: [String: Source]) {
        var file: [String: String] = [:]
        let path = configFile ?? environment["BIOAUTH_CONFIG"]
        if let path { file = try Self.read(configFile: path) }
        var configuration = ServerConfiguration()
        var sources: [String: Source] = [:]
        for setting in all {
            let given: (String, Source)? =
                flags[setting.key].map { ($0, .flag(setting.optionName)) }
                ?? environment[setting.environmentName].map { ($0, .environment(setting.environmentName)) }
                ?? file[setting.key].map { ($0, .file(path: path ?? "", key: setting.key)) }
            guard let (text, source) = given else {
                sources[setting.key] = .defaultValue
                continue
            }
            do {
                try setting.apply(&configuration, text)
            } catch {
                let shown = setting.secret ? "(redacted)" : text
                throw ValidationError("\(source) \(error.text), not \(shown)")
            }
            sources[setting.key] = source
        }
        // Defaults that follow from other settings are filled in here, so that --print-config shows the values in effect.
        let origins = configuration.passkeys.origins
        configuration.passkeys.applyDefaultOrigin(port: configuration.port)
        if configuration.passkeys.origins != origins { sources["passkeyOrigins"] = .derived("the web page's own origin on this port") }
        if configuration.passkeys.relyingPartyID == nil, configuration.passkeys.enabled {
            sources["passkeyRpId"] = .derived("the first passkey origin's host")
        }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError("\(error)")
        }
        return (configuration, sources)
    }

    /// A JSON object of settings by key; values are strings, numbers, booleans or arrays of strings. An unknown key is
    /// an error (a misspelled setting must not be ignored).
    static func read(configFile path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read the config file \(path)") }
        let object: [String: FileValue]
        do {
            object = try JSONDecoder().decode([String: FileValue].self, from: data)
        } catch {
            throw ValidationError("the config file \(path) is not a JSON object of strings, numbers, booleans and lists of strings")
        }
        let known = Set(all.map(\.key))
        for key in object.keys.sorted() where !known.contains(key) {
            let hint = closest(to: key, among: all.map(\.key)).map { "; did you mean \($0)?" } ?? ""
            throw ValidationError("config file \(path): unknown setting \(key)\(hint)")
        }
        return object.mapValues(\.text)
    }

    /// Environment variables that look like a misspelled setting (`BIOAUTH_PROT`): each a warning naming the setting
    /// meant. Other `BIOAUTH_` variables (a test's, a script's) are left alone: only a near miss is a mistake.
    static func misspelledEnvironment(_ environment: [String: String]) -> [String] {
        let names = all.map(\.environmentName)
        let known = Set(names + ["BIOAUTH_CONFIG"])
        return environment.keys.sorted().compactMap { name in
            guard name.hasPrefix("BIOAUTH_"), !known.contains(name), let meant = closest(to: name, among: names) else { return nil }
            return "\(name) is not a setting and is ignored; did you mean \(meant)?"
        }
    }

    /// The one of `candidates` nearest `name` (edit distance, ignoring case) when it is near enough to be a typing
    /// mistake: at most 2 edits, and fewer than a third of the name's letters. Ties: none, rather than a guess.
    static func closest(to name: String, among candidates: [String]) -> String? {
        let word = Array(name.lowercased())
        let limit = min(2, max(1, word.count / 3))
        var best: (candidate: String, distance: Int)?
        var tied = false
        for candidate in candidates {
            let distance = editDistance(word, Array(candidate.lowercased()))
            guard distance <= limit else { continue }
            if let current = best, distance == current.distance {
                tied = true
            } else if best.map({ distance < $0.distance }) ?? true {
                best = (candidate, distance)
                tied = false
            }
        }
        return tied ? nil : best?.candidate
    }

    /// Levenshtein distance (insertions, deletions, substitutions), with a transposition of two neighbours counted as
    /// one edit (`prot` → `port`).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var row = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { row[j] = min(row[j], previous2[j - 2] + 1) }
            }
            previous2 = previous
            previous = row
        }
        return previous[b.count]
    }

    /// A config file's value, as the text the environment would carry.
    private struct FileValue: Decodable {
        let text: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                text = String(value)
            } else if let value = try? container.decode(Int64.self) {
                text = String(value)
            } else if let value = try? container.decode(Double.self) {
                text = String(value)
            } else if let value = try? container.decode(String.self) {
                text = value
            } else {
                text = try container.decode([String].self).joined(separator: ",")
            }
        }
    }

    /// The default of the setting `key`, written as `--print-config` writes its value (in the setting's own unit: days,
    /// hours, rows): what an option's help quotes, so that the help cannot drift from the defaults.
    static func defaultText(of key: String) -> String {
        guard let setting = all.first(where: { $0.key == key }) else { preconditionFailure("no setting \(key)") }
        return setting.show(ServerConfiguration())
    }

    /// What `bioauth serve --print-config` prints: every setting, its value (secrets redacted) and where it came from.
    static func describe(_ configuration: ServerConfiguration, sources: [String: Source]) -> String {
        let width = all.map(\.key.count).max() ?? 0
        return all.map { setting in
            let value = setting.show(configuration)
            return
                "\(setting.key.padding(toLength: width, withPad: " ", startingAt: 0))  \(value.isEmpty ? "-" : value)  (\(sources[setting.key] ?? .defaultValue))"
        }.joined(separator: "\n")
    }
}
