import Foundation

/// The console's words in English and Simplified Chinese. The language is the `lang` cookie the switch sets, else the
/// browser's `Accept-Language` (any `zh` first gives Simplified Chinese), else English.
enum ConsoleLanguage: String, Sendable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"

    /// The cookie the language switch sets (not a secret; `__Host-` keeps it to this origin).
    static let cookieName = "__Host-bioauth-console-lang"

    /// The language for a request: `?lang=`, then the cookie, then `Accept-Language`.
    static func of(query: String?, cookie: String?, acceptLanguage: String?) -> ConsoleLanguage {
        if let query, let chosen = ConsoleLanguage(rawValue: query) { return chosen }
        if let cookie, let chosen = ConsoleLanguage(rawValue: cookie) { return chosen }
        let ranges = (acceptLanguage ?? "").split(separator: ",").map {
            $0.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        }
        for range in ranges {
            if range.hasPrefix("zh") { return .simplifiedChinese }
            if range.hasPrefix("en") { return .english }
        }
        return .english
    }

    /// The page's words, by key.
    var text: [String: String] { self == .english ? Self.englishText : Self.chineseText }

    /// One word or sentence.
    subscript(_ key: String) -> String { text[key] ?? Self.englishText[key] ?? key }

    private static let englishText: [String: String] = [
        "console": "BioAuth console", "customers": "Customers", "signOut": "Sign out", "signInTitle": "Operator sign-in",
        "enrollTitle": "Set up your second factor",
        "enrollText": "Add this key to your authenticator app, then sign in again with your password and the 6-digit code it shows.",
        "key": "Key:", "enrollLink": "Or open this link on the phone with the app:", "name": "Name", "password": "Password", "code": "Code",
        "signIn": "Sign in", "findCustomer": "Find a customer", "usernameOrAccount": "Username or account id", "find": "Find",
        "noCustomer": "No customer with the username or account id", "account": "Account", "customerSince": "customer since",
        "locks": "Locks", "passwordSignIn": "Password sign-in:", "lockedUntil": "locked until", "notLocked": "not locked",
        "paymentPIN": "Payment PIN:", "reason": "Reason", "unlock": "Unlock the account", "clearPINLock": "Clear the PIN lock",
        "devices": "Devices", "device": "Device", "biometry": "Biometry", "registered": "Registered", "lastUsed": "Last used", "state": "State",
        "revoke": "Revoke", "noDevices": "No devices.", "liveSessions": "Live sessions", "session": "Session", "signInMethod": "Sign-in method",
        "installation": "Installation", "since": "Since", "noSessions": "No live sessions.", "endSessions": "End all sessions",
        "payments": "Payments", "payment": "Payment", "amount": "Amount", "payee": "Payee", "created": "Created", "cancel": "Cancel",
        "noPayments": "No payments.", "timeline": "Security timeline", "when": "When", "event": "Event", "outcome": "Outcome",
        "operatorAndReason": "Operator and reason", "active": "active", "revoked": "revoked", "yes": "yes", "no": "no",
        "passkeys": "Passkeys", "passkey": "Passkey", "passkeyKind": "Kind", "passkeySynced": "synced", "passkeyDeviceBound": "device-bound",
        "attestation": "Attestation", "noPasskeys": "No passkeys.", "done.passkey-revoked": "The passkey is revoked.",
        "done.revoked": "The device is revoked.", "done.sessions-ended": "Every session ended.", "done.unlocked": "The account is unlocked.",
        "done.pin-unlocked": "The PIN lock is cleared.", "done.cancelled": "The payment is cancelled.",
        "error.credentials": "The name, password or code is wrong.", "error.locked": "Too many failed sign-ins. Try again in 15 minutes at most.",
        "error.rateLimited": "Too many sign-in attempts from this address. Try again in a minute.",
        "error.viewer": "Viewers can only read.",
        "error.origin": "This form was sent from another site.",
        "error.csrf": "This form has expired or was not sent from the console. Open the page again.",
        "refused": "Refused", "notDone": "Not done", "notFound": "No such customer",
        "paymentSearch": "Find payments", "any": "any", "from": "From", "until": "Until", "amountMinor": "Amount (minor units)",
        "amountHint": "Amounts in minor units: 8800 is ¥88.00. Dates in UTC; until is exclusive. At most 100 payments, newest first.",
        "customer": "Customer", "error.search": "A filter is not valid:",
        "overview": "Overview", "signInsByHour": "Sign-ins in the last 24 hours (UTC), by hour", "totals": "In all:",
        "biometricLegend": "Face ID / Touch ID / Optic ID", "passkeyLegend": "passkey", "passwordLegend": "password", "failuresLegend": "failed",
        "failuresByCode": "Failures in the last 24 hours, by problem code", "count": "Count", "noFailures": "No failures.",
        "problemCode": "Problem code",
        "administration": "Administration", "operators": "Operators", "role": "Role", "disable": "Disable", "initialPassword": "Initial password",
        "createOperator": "Create operator", "disabled": "disabled", "totpPending": "TOTP not enrolled",
        "operatorHint": "The new operator enrolls their TOTP second factor at their first sign-in; give them the password in person.",
        "payees": "Payees", "verification": "Verification", "registeredBy": "Registered by", "noPayees": "No payees.",
        "unverified": "not verified by the bank", "registerPayee": "Register or rename", "serviceClients": "Service clients", "client": "Client",
        "scopes": "Scopes", "noClients": "No service clients.",
        "clientsHint": "Service clients are made and their secrets rotated with bioauth admin service, so a secret never shows in a browser.",
        "error.admin": "Only admins can do this.", "done.operator-created": "The operator is created.",
        "done.operator-disabled": "The operator is disabled.", "done.payee-registered": "The payee is registered.",
        "done.client-disabled": "The service client is disabled: its secrets and tokens stopped working.",
        "webhookEndpoints": "Webhook endpoints", "endpoint": "Endpoint", "events": "Events", "noEndpoints": "No webhook endpoints.",
    ]

    private static let chineseText: [String: String] = [
        "console": "BioAuth 运营控制台", "customers": "客户", "signOut": "退出登录", "signInTitle": "运营人员登录",
        "enrollTitle": "设置第二重验证", "enrollText": "请将此密钥添加到身份验证器应用，然后用密码和应用显示的 6 位验证码重新登录。",
        "key": "密钥：", "enrollLink": "或在装有该应用的手机上打开此链接：", "name": "用户名", "password": "密码", "code": "验证码",
        "signIn": "登录", "findCustomer": "查找客户", "usernameOrAccount": "用户名或账户编号", "find": "查找",
        "noCustomer": "没有此用户名或账户编号的客户", "account": "账户", "customerSince": "注册于", "locks": "锁定状态",
        "passwordSignIn": "密码登录：", "lockedUntil": "锁定至", "notLocked": "未锁定", "paymentPIN": "支付密码：", "reason": "原因",
        "unlock": "解锁账户", "clearPINLock": "解除支付密码锁定", "devices": "设备", "device": "设备", "biometry": "生物识别",
        "registered": "登记时间", "lastUsed": "最近使用", "state": "状态", "revoke": "撤销", "noDevices": "没有设备。", "liveSessions": "有效会话",
        "session": "会话", "signInMethod": "登录方式", "installation": "安装实例", "since": "开始时间", "noSessions": "没有有效会话。",
        "endSessions": "结束所有会话", "payments": "支付", "payment": "支付", "amount": "金额", "payee": "收款方", "created": "创建时间",
        "cancel": "取消", "noPayments": "没有支付。", "timeline": "安全时间线", "when": "时间", "event": "事件", "outcome": "结果",
        "operatorAndReason": "操作人员及原因", "active": "有效", "revoked": "已撤销", "yes": "是", "no": "否",
        "passkeys": "通行密钥", "passkey": "通行密钥", "passkeyKind": "类型", "passkeySynced": "已同步", "passkeyDeviceBound": "仅限单台设备",
        "attestation": "认证声明", "noPasskeys": "没有通行密钥。", "done.passkey-revoked": "通行密钥已撤销。",
        "done.revoked": "设备已撤销。", "done.sessions-ended": "所有会话已结束。", "done.unlocked": "账户已解锁。",
        "done.pin-unlocked": "支付密码锁定已解除。", "done.cancelled": "支付已取消。",
        "error.credentials": "用户名、密码或验证码错误。", "error.locked": "登录失败次数过多，请稍后再试（最多 15 分钟）。",
        "error.rateLimited": "此地址的登录尝试过多，请一分钟后再试。",
        "error.viewer": "只读角色不能执行操作。", "error.origin": "此表单来自其他网站。",
        "error.csrf": "此表单已过期或并非来自控制台，请重新打开页面。", "refused": "已拒绝", "notDone": "未完成", "notFound": "没有此客户",
        "paymentSearch": "查找支付", "any": "全部", "from": "起始日期", "until": "截止日期", "amountMinor": "金额（最小货币单位）",
        "amountHint": "金额以最小货币单位计：8800 即 ¥88.00。日期为 UTC，截止日期不含当天。最多显示 100 笔，最新的在前。",
        "customer": "客户", "error.search": "筛选条件无效：",
        "overview": "概览", "signInsByHour": "最近 24 小时的登录（UTC，按小时）", "totals": "合计：",
        "biometricLegend": "面容 ID / 触控 ID / 视控 ID", "passkeyLegend": "通行密钥", "passwordLegend": "密码", "failuresLegend": "失败",
        "failuresByCode": "最近 24 小时的失败（按问题代码）", "count": "次数", "noFailures": "没有失败。",
        "problemCode": "问题代码",
        "administration": "管理", "operators": "运营人员", "role": "角色", "disable": "停用", "initialPassword": "初始密码",
        "createOperator": "创建运营人员", "disabled": "已停用", "totpPending": "未设置动态验证码",
        "operatorHint": "新运营人员在首次登录时设置动态验证码；请当面告知其密码。", "payees": "收款方", "verification": "核验",
        "registeredBy": "登记者", "noPayees": "没有收款方。", "unverified": "银行未核验", "registerPayee": "登记或改名",
        "serviceClients": "服务客户端", "client": "客户端", "scopes": "权限范围", "noClients": "没有服务客户端。",
        "clientsHint": "服务客户端通过 bioauth admin service 创建和轮换密钥，密钥不会出现在浏览器中。", "error.admin": "只有管理员可以执行此操作。",
        "done.operator-created": "运营人员已创建。", "done.operator-disabled": "运营人员已停用。", "done.payee-registered": "收款方已登记。",
        "done.client-disabled": "服务客户端已停用：其密钥和令牌已失效。", "webhookEndpoints": "Webhook 端点", "endpoint": "端点",
        "events": "事件", "noEndpoints": "没有 Webhook 端点。",
    ]
}
