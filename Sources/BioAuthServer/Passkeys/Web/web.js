// BioAuth's web sign-in page: password sign-in, passkey sign-in (discoverable or by username), creating and revoking
// passkeys. It talks to the same JSON API as the apps. Tokens stay in this page's memory only: a reload signs out.
"use strict";

const TEXT = {
  en: {
    title: "Sign in", account: "Your account", switch: "中文", username: "Username", password: "Password", signIn: "Sign in", or: "or",
    signInPasskey: "Sign in with a passkey", passkeyHint: "No username needed: your device shows the passkeys it holds for this bank.",
    passkeys: "Passkeys", createPasskey: "Create a passkey", signOut: "Sign out", revoke: "Revoke",
    paymentsHint: "Passkeys sign you in. Payments are still approved on your phone with Face ID or Touch ID, or with your payment PIN.",
    who: (name, method) => `Signed in as ${name} (${method}).`,
    methods: { password: "password", passkey: "passkey", biometric: "Face ID / Touch ID", approval: "approved on your phone" },
    none: "No passkey yet.", created: "Passkey created.", revoked: "Passkey revoked.", signedOut: "Signed out.",
    synced: "synced", deviceBound: "this device only", lastUsed: "last used", never: "never used", revokedAt: "revoked",
    cancelled: "Cancelled.", unsupported: "This browser cannot use passkeys.",
    scanTitle: "Scan with your bank's app", scanNumber: "Then pick this number on your phone:", qrAlt: "QR code to sign in with your bank's app",
    qrScanned: "Scanned. Confirm on your phone.", qrDenied: "Declined on the phone. Scan the new code to try again.",
    qrRefreshed: "A new code every 30 seconds.",
  },
  "zh-Hans": {
    title: "登录", account: "我的账户", switch: "English", username: "用户名", password: "密码", signIn: "登录", or: "或",
    signInPasskey: "使用通行密钥登录", passkeyHint: "无需输入用户名：设备会列出它为本行保存的通行密钥。",
    passkeys: "通行密钥", createPasskey: "创建通行密钥", signOut: "退出登录", revoke: "撤销",
    paymentsHint: "通行密钥用于登录。付款仍需在手机上用面容 ID 或触控 ID，或支付密码确认。",
    who: (name, method) => `已登录：${name}（${method}）。`,
    methods: { password: "密码", passkey: "通行密钥", biometric: "面容 ID / 触控 ID", approval: "手机确认" },
    none: "尚无通行密钥。", created: "已创建通行密钥。", revoked: "已撤销通行密钥。", signedOut: "已退出登录。",
    synced: "已同步", deviceBound: "仅限此设备", lastUsed: "上次使用", never: "从未使用", revokedAt: "已撤销",
    cancelled: "已取消。", unsupported: "此浏览器无法使用通行密钥。",
    scanTitle: "用银行 App 扫码登录", scanNumber: "然后在手机上选择此数字：", qrAlt: "用银行 App 扫描此二维码登录",
    qrScanned: "已扫描，请在手机上确认。", qrDenied: "已在手机上拒绝。请扫描新的二维码重试。", qrRefreshed: "二维码每 30 秒更新一次。",
  },
};

let language = (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh-Hans" : "en";
let session = null; // {accessToken, refreshToken}

const $ = (id) => document.getElementById(id);
const t = (key) => TEXT[language][key];

function applyLanguage() {
  document.documentElement.lang = language;
  for (const element of document.querySelectorAll("[data-text]")) element.textContent = t(element.dataset.text);
  document.title = `${t($("heading").dataset.text)} · BioAuth`;
}

function say(message, kind) {
  const status = $("status");
  status.textContent = message;
  status.className = kind || "";
}

/// A stable id for this browser: one session per account and installation.
function installationId() {
  let id = localStorage.getItem("bioauth.installation");
  if (!id) {
    id = "web-" + crypto.randomUUID();
    localStorage.setItem("bioauth.installation", id);
  }
  return id;
}

class Problem extends Error {
  constructor(body, status) {
    super(body.detail || `HTTP ${status}`);
    this.code = body.code || "http_" + status;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session) headers.Authorization = "Bearer " + session.accessToken;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return null;
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new Problem(json, response.status);
  return json;
}

// base64url <-> ArrayBuffer, for browsers without the WebAuthn JSON helpers.
function toBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0)).buffer;
}
function toText(buffer) {
  let binary = "";
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function creationOptions(json) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  return { ...json, challenge: toBytes(json.challenge), user: { ...json.user, id: toBytes(json.user.id) },
    excludeCredentials: json.excludeCredentials.map((c) => ({ ...c, id: toBytes(c.id) })) };
}
function requestOptions(json) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  return { ...json, challenge: toBytes(json.challenge), allowCredentials: json.allowCredentials.map((c) => ({ ...c, id: toBytes(c.id) })) };
}
function credentialJSON(credential) {
  if (credential.toJSON) return credential.toJSON();
  const r = credential.response;
  const response = { clientDataJSON: toText(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toText(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  } else {
    response.authenticatorData = toText(r.authenticatorData);
    response.signature = toText(r.signature);
    if (r.userHandle) response.userHandle = toText(r.userHandle);
  }
  return { id: credential.id, rawId: toText(credential.rawId), type: credential.type, response };
}

function fail(error) {
  if (error.name === "NotAllowedError" || error.name === "AbortError") return say(t("cancelled"), "error");
  say(error.code ? `${error.message} (${error.code})` : error.message, "error");
}

async function showSignedIn() {
  stopQRCode();
  const me = await api("GET", "/v1/me");
  $("who").textContent = t("who")(me.username, t("methods")[me.signInMethod] || me.signInMethod);
  const { passkeys } = await api("GET", "/v1/passkeys");
  const list = $("passkey-list");
  list.replaceChildren();
  if (passkeys.length === 0) {
    const item = document.createElement("li");
    item.textContent = t("none");
    list.append(item);
  }
  for (const passkey of passkeys) {
    const item = document.createElement("li");
    item.dataset.passkeyId = passkey.passkeyId;
    const label = document.createElement("div");
    label.textContent = passkey.name;
    const detail = document.createElement("small");
    const used = passkey.lastUsedAt ? `${t("lastUsed")} ${new Date(passkey.lastUsedAt).toLocaleString(language)}` : t("never");
    detail.textContent = [passkey.backupEligible ? t("synced") : t("deviceBound"), passkey.revokedAt ? t("revokedAt") : used].join(" · ");
    label.append(detail);
    item.append(label);
    if (passkey.revokedAt) {
      item.className = "revoked";
    } else {
      const revoke = document.createElement("button");
      revoke.type = "button";
      revoke.className = "revoke";
      revoke.textContent = t("revoke");
      revoke.addEventListener("click", () => revokePasskey(passkey.passkeyId).catch(fail));
      item.append(revoke);
    }
    list.append(item);
  }
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  $("heading").dataset.text = "account";
  applyLanguage();
}

async function signInWithPassword(event) {
  event.preventDefault();
  session = await api("POST", "/v1/sessions", { username: $("username").value, password: $("password").value, installationId: installationId() });
  $("password").value = "";
  say("");
  await showSignedIn();
}

async function signInWithPasskey() {
  if (!window.PublicKeyCredential) return say(t("unsupported"), "error");
  const username = $("username").value.trim();
  const options = await api("POST", "/v1/sessions/passkey/options", username ? { username } : {});
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options.publicKey) });
  session = await api("POST", "/v1/sessions/passkey", {
    challengeId: options.challengeId, installationId: installationId(), credential: credentialJSON(credential),
  });
  say("");
  await showSignedIn();
}

async function createPasskey() {
  if (!window.PublicKeyCredential) return say(t("unsupported"), "error");
  const options = await api("POST", "/v1/passkeys/registration-options");
  const credential = await navigator.credentials.create({ publicKey: creationOptions(options.publicKey) });
  const name = `${navigator.userAgentData?.platform || navigator.platform || "Browser"} passkey`.slice(0, 64);
  await api("POST", "/v1/passkeys", { challengeId: options.challengeId, name, credential: credentialJSON(credential) });
  await showSignedIn();
  say(t("created"), "ok");
}

async function revokePasskey(id) {
  await api("DELETE", "/v1/passkeys/" + encodeURIComponent(id));
  await showSignedIn();
  say(t("revoked"), "ok");
}

// Scan to sign in: the server draws a QR code (usable once, for 30 seconds) and sets a cookie that binds it to this
// browser; the page asks once a second whether the phone approved, and gets the session's tokens when it did.
let qr = null; // {qrSignInId, expiresAt}
let qrTimer = null;

async function showQRCode() {
  const issued = await api("POST", "/v1/qr-sign-ins");
  qr = { id: issued.qrSignInId, expiresAt: Date.parse(issued.expiresAt) };
  const image = $("qr-image");
  if (image.src.startsWith("blob:")) URL.revokeObjectURL(image.src);
  image.src = URL.createObjectURL(new Blob([issued.svg], { type: "image/svg+xml" }));
  image.alt = t("qrAlt");
  image.dataset.url = issued.url;
  $("qr-number").textContent = String(issued.matchNumber);
  $("qr-number-line").hidden = false;
  qrSay("qrRefreshed");
}

/// The QR code's state line, kept in the page's language when it is switched.
function qrSay(key) {
  const line = $("qr-state");
  line.dataset.text = key;
  line.textContent = t(key);
}

async function pollQRCode() {
  if (session || !qr) return;
  const state = await api("POST", `/v1/qr-sign-ins/${encodeURIComponent(qr.id)}/session`, { installationId: installationId() });
  if (state.status === "signed_in" && state.tokens) {
    stopQRCode();
    session = state.tokens;
    say("");
    await showSignedIn();
  } else if (state.status === "scanned") {
    qrSay("qrScanned");
  } else if (state.status === "denied") {
    await showQRCode();
    qrSay("qrDenied");
  } else if (state.status === "expired" || (state.status === "waiting" && Date.now() >= qr.expiresAt)) {
    await showQRCode();
  }
}

function startQRCode() {
  if (qrTimer) return;
  showQRCode().catch(fail);
  qrTimer = setInterval(() => pollQRCode().catch(fail), 1000);
}

function stopQRCode() {
  clearInterval(qrTimer);
  qrTimer = null;
  qr = null;
}

async function signOut() {
  try { await api("DELETE", "/v1/sessions/current"); } finally {
    session = null;
    $("who").textContent = "";
    $("passkey-list").replaceChildren();
    $("signed-in").hidden = true;
    $("signed-out").hidden = false;
    $("heading").dataset.text = "title";
    applyLanguage();
    say(t("signedOut"), "ok");
    startQRCode();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  applyLanguage();
  $("language").addEventListener("click", () => { language = language === "en" ? "zh-Hans" : "en"; applyLanguage(); if (session) showSignedIn().catch(fail); });
  $("password-form").addEventListener("submit", (event) => signInWithPassword(event).catch(fail));
  $("passkey-sign-in").addEventListener("click", () => signInWithPasskey().catch(fail));
  $("create-passkey").addEventListener("click", () => createPasskey().catch(fail));
  $("sign-out").addEventListener("click", () => signOut().catch(fail));
  startQRCode();
});
