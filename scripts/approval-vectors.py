#!/usr/bin/env python3
"""Writes the approval test vectors (docs/PROTOCOL.md, "Approvals") with an implementation independent of the Swift one:
canonical approvals and their hashes, an `approval` signed payload signed by a test device key, and a signed approval
signed by a test receipt key.

Run from the repository root: python3 scripts/approval-vectors.py
Needs the `cryptography` package. ECDSA signatures are randomized, so a new run gives new (equally valid) signatures;
the bytes never change.
"""
import base64
import hashlib
import json
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

OUT = "Tests/BioAuthCoreTests/Fixtures/approval-v1.json"


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def field(value: bytes) -> bytes:
    return struct.pack(">H", len(value)) + value


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def approval(approval_id, kind, requester, message, browser, platform, address, number, created_at_ms):
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"approval") + field(approval_id.encode()) + field(kind.encode("ascii"))
            + field(requester.encode()) + field(message.encode()) + field(browser.encode()) + field(platform.encode())
            + field(address.encode()) + bytes([number]) + struct.pack(">Q", created_at_ms))


def payload(purpose, rp_id, challenge, key_id, counter, hash_):
    return (b"BIOAUTH\x00" + bytes([1]) + field(purpose.encode("ascii")) + field(rp_id.encode("utf-8"))
            + field(challenge) + field(key_id) + struct.pack(">Q", counter) + field(hash_))


def approved(receipt_key_id, approval_hash, account_id, device_key_id, amr, approved_at_ms):
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"approved") + field(receipt_key_id) + field(approval_hash) + field(account_id.encode())
            + field(device_key_id) + field(" ".join(amr).encode("ascii")) + struct.pack(">Q", approved_at_ms))


def key(label: str):
    return ec.derive_private_key(int.from_bytes(sha256(label.encode()), "big"), ec.SECP256R1())


def x963(private_key) -> bytes:
    return private_key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


cases = [
    ("operation", "9b2e4f10-3c7a-4d8e-a1b5-6f0c2d9e8a47", "operation", "Bank Call Centre", "Raise the daily transfer limit to ¥50,000",
     "", "", "", 0, 1795000000000),
    ("sign-in with a channel", "c41d7e2a-58b6-4f93-9e0d-1a2b3c4d5e6f", "sign_in", "网上银行", "", "Chrome", "macOS", "203.0.113.7", 47,
     1795000060000),
    ("sign-in, nothing known of the channel", "0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b", "sign_in", "Branch Terminal", "", "", "", "", 10,
     1795000120000),
    ("binding a new device", "7d3c2b1a-0f9e-4d8c-b7a6-958473625140", "bind_device", "Example Bank", "Bob’s iPhone · iPhone (iPhone15,2) · Face ID",
     "", "iOS", "198.51.100.23", 63, 1795000180000),
]

approvals = []
for name, approval_id, kind, requester, message, browser, platform, address, number, created in cases:
    data = approval(approval_id, kind, requester, message, browser, platform, address, number, created)
    approvals.append({
        "name": name, "approvalId": approval_id, "kind": kind, "requester": requester, "bindingMessage": message,
        "channelBrowser": browser, "channelPlatform": platform, "channelAddress": address, "number": number,
        "createdAtMs": created, "bytesHex": data.hex(), "sha256Hex": sha256(data).hex(),
    })

# The phone's signature over the sign-in vector.
device_key = key("bioauth test key 1")
device_key_id = sha256(x963(device_key))
sign_in = cases[1]
sign_in_hash = sha256(approval(*sign_in[1:]))
challenge = sha256(b"approval challenge 1")
signed_payload = payload("approval", "bank.example", challenge, device_key_id, 9, sign_in_hash)
device_signature = device_key.sign(signed_payload, ec.ECDSA(hashes.SHA256()))

# The server's signed approval of it.
receipt_key = key("bioauth test receipt key")
receipt_key_id = sha256(x963(receipt_key))
account_id = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
approved_at = 1795000075000
amr = ["hwk", "face"]
approved_bytes = approved(receipt_key_id, sign_in_hash, account_id, device_key_id, amr, approved_at)
receipt_signature = receipt_key.sign(approved_bytes, ec.ECDSA(hashes.SHA256()))

with open(OUT, "w", encoding="utf-8") as out:
    json.dump({
        "format": "BioAuth canonical approval, approval signed payload and signed approval, version 1",
        "note": "Test keys only: their private scalars are published here.",
        "approvals": approvals,
        "signedPayload": {
            "relyingPartyId": "bank.example", "challengeHex": challenge.hex(), "keyIdHex": device_key_id.hex(), "counter": 9,
            "approvalHashHex": sign_in_hash.hex(), "bytesHex": signed_payload.hex(), "publicKeyX963Hex": x963(device_key).hex(),
            "signatureDerHex": device_signature.hex(),
        },
        "signedApproval": {
            "receiptPublicKeyX963Hex": x963(receipt_key).hex(),
            "signedBytesHex": approved_bytes.hex(),
            "approval": {
                "version": 1, "approvalId": sign_in[1], "accountId": account_id, "kind": "sign_in", "requester": sign_in[3],
                "channelBrowser": sign_in[5], "channelPlatform": sign_in[6], "channelAddress": sign_in[7], "number": sign_in[8],
                "createdAtMs": sign_in[9], "deviceKeyId": b64url(device_key_id), "amr": amr, "approvedAtMs": approved_at,
                "keyId": b64url(receipt_key_id), "signature": b64url(receipt_signature),
            },
        },
    }, out, ensure_ascii=False, indent=2)
    out.write("\n")
print(f"wrote {len(approvals)} approvals, a signed payload and a signed approval to {OUT}")
