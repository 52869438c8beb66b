#!/usr/bin/env python3
"""Writes the signed-payload, transaction and receipt test vectors (docs/PROTOCOL.md) with an implementation
independent of the Swift one.

Run from the repository root: python3 scripts/signed-payload-vectors.py
Needs the `cryptography` package. ECDSA signatures are randomized, so a new run gives new (equally valid)
signatures; the payload bytes never change.
"""
import hashlib
import json
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

OUT = "Tests/BioAuthCoreTests/Fixtures/signed-payload-v1.json"
PAYMENT_OUT = "Tests/BioAuthCoreTests/Fixtures/payment-v1.json"


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def field(value: bytes) -> bytes:
    return struct.pack(">H", len(value)) + value


def payload(purpose, rp_id, challenge, key_id, counter, tx_hash=b""):
    return (b"BIOAUTH\x00" + bytes([1]) + field(purpose.encode("ascii")) + field(rp_id.encode("utf-8"))
            + field(challenge) + field(key_id) + struct.pack(">Q", counter) + field(tx_hash))


def transaction(payment_id, amount_minor, currency, exponent, payee_id, payee_name):
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"transaction") + field(payment_id.encode()) + struct.pack(">Q", amount_minor)
            + field(currency.encode("ascii")) + bytes([exponent]) + field(payee_id.encode()) + field(payee_name.encode()))


def receipt(key_id, tx_hash, account_id, method, authorized_at_ms):
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"receipt") + field(key_id) + field(tx_hash) + field(account_id.encode())
            + field(method.encode("ascii")) + struct.pack(">Q", authorized_at_ms))


COFFEE = ("3f1c2a9e-0b7d-4c55-9a61-2e8f0d4b7c10", 8800, "CNY", 2, "merchant-coffee-042", "Coffee Shop")


def key(label: str):
    scalar = int.from_bytes(sha256(label.encode()), "big")
    return ec.derive_private_key(scalar, ec.SECP256R1())


def x963(private_key) -> bytes:
    return private_key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


cases = [
    ("register, first key", "register", "bank.example", bytes(range(32)), 0, b"", "bioauth test key 1"),
    ("login", "login", "bank.example", sha256(b"challenge 2"), 1, b"", "bioauth test key 1"),
    ("login, non-ASCII relying-party id", "login", "银行.example", sha256(b"challenge 3"), 42, b"", "bioauth test key 2"),
    ("login, the largest counter (2^63 - 1)", "login", "bank.example", sha256(b"challenge 4"), 2**63 - 1, b"", "bioauth test key 2"),
    ("payment", "payment", "bank.example", sha256(b"challenge 5"), 7, sha256(transaction(*COFFEE)), "bioauth test key 1"),
    ("pin", "pin", "bank.example", sha256(b"challenge 6"), 8, b"", "bioauth test key 1"),
]

vectors = []
for name, purpose, rp_id, challenge, counter, tx_hash, key_label in cases:
    private_key = key(key_label)
    public = x963(private_key)
    key_id = sha256(public)
    message = payload(purpose, rp_id, challenge, key_id, counter, tx_hash)
    signature = private_key.sign(message, ec.ECDSA(hashes.SHA256()))
    vectors.append({
        "name": name,
        "purpose": purpose,
        "relyingPartyId": rp_id,
        "challengeHex": challenge.hex(),
        "keyIdHex": key_id.hex(),
        "counter": str(counter),
        "transactionHashHex": tx_hash.hex(),
        "privateKeyScalarHex": private_key.private_numbers().private_value.to_bytes(32, "big").hex(),
        "publicKeyX963Hex": public.hex(),
        "payloadHex": message.hex(),
        "signatureDerHex": signature.hex(),
    })

with open(OUT, "w") as out:
    json.dump({
        "format": "BioAuth signed payload, version 1",
        "signature": "ECDSA P-256 with SHA-256 over the payload bytes, DER",
        "note": "Test keys only: their private scalars are published here.",
        "vectors": vectors,
    }, out, indent=2, ensure_ascii=False)
    out.write("\n")
print(f"wrote {len(vectors)} vectors to {OUT}")

transactions = []
for payment_id, amount, currency, exponent, payee_id, payee_name in [
    COFFEE,
    ("7d0e5b1a-9c3f-4e2a-b8d6-1f4a0c9e2b73", 500, "JPY", 0, "shop:tokyo-7", "東京の本屋"),
    ("c2a1e4f0-5d6b-4a8c-9e3f-7b1d0a2c4e68", 1250, "KWD", 3, "payee_1", "Al Noor \u062a\u062c\u0627\u0631\u0629"),
]:
    data = transaction(payment_id, amount, currency, exponent, payee_id, payee_name)
    transactions.append({
        "paymentId": payment_id, "amountMinor": amount, "currency": currency, "exponent": exponent,
        "payeeId": payee_id, "payeeName": payee_name, "bytesHex": data.hex(), "sha256Hex": sha256(data).hex(),
    })

server_key = key("bioauth test receipt key")
server_public = x963(server_key)
server_key_id = sha256(server_public)
coffee_hash = sha256(transaction(*COFFEE))
account_id = "a7c3e9d1-2b4f-4a6e-8c0d-5f1b3e7a9c2d"
authorized_at = 1795000000123
receipt_bytes = receipt(server_key_id, coffee_hash, account_id, "biometric", authorized_at)
receipt_signature = server_key.sign(receipt_bytes, ec.ECDSA(hashes.SHA256()))
import base64
b64url = lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")

with open(PAYMENT_OUT, "w") as out:
    json.dump({
        "format": "BioAuth canonical transaction and payment receipt, version 1",
        "note": "Test keys only: their private scalars are published here.",
        "transactions": transactions,
        "receipt": {
            "serverPrivateKeyScalarHex": server_key.private_numbers().private_value.to_bytes(32, "big").hex(),
            "serverPublicKeyX963Hex": server_public.hex(),
            "signedBytesHex": receipt_bytes.hex(),
            "json": {
                "version": 1, "paymentId": COFFEE[0], "accountId": account_id, "amountMinor": COFFEE[1],
                "currency": COFFEE[2], "payeeId": COFFEE[4], "payeeName": COFFEE[5], "method": "biometric",
                "authorizedAtMs": authorized_at, "keyId": b64url(server_key_id), "signature": b64url(receipt_signature),
            },
        },
    }, out, indent=2, ensure_ascii=False)
    out.write("\n")
print(f"wrote {len(transactions)} transactions and a receipt to {PAYMENT_OUT}")
