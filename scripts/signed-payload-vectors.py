#!/usr/bin/env python3
"""Writes the signed-payload test vectors (docs/PROTOCOL.md) with an implementation independent of the Swift one.

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


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def field(value: bytes) -> bytes:
    return struct.pack(">H", len(value)) + value


def payload(purpose, rp_id, challenge, key_id, counter, tx_hash=b""):
    return (b"BIOAUTH\x00" + bytes([1]) + field(purpose.encode("ascii")) + field(rp_id.encode("utf-8"))
            + field(challenge) + field(key_id) + struct.pack(">Q", counter) + field(tx_hash))


def key(label: str):
    scalar = int.from_bytes(sha256(label.encode()), "big")
    return ec.derive_private_key(scalar, ec.SECP256R1())


def x963(private_key) -> bytes:
    return private_key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


cases = [
    ("register, first key", "register", "bank.example", bytes(range(32)), 0, b"", "bioauth test key 1"),
    ("login", "login", "bank.example", sha256(b"challenge 2"), 1, b"", "bioauth test key 1"),
    ("login, non-ASCII relying-party id", "login", "银行.example", sha256(b"challenge 3"), 42, b"", "bioauth test key 2"),
    ("login, counter above 2^63", "login", "bank.example", sha256(b"challenge 4"), 2**63 + 5, b"", "bioauth test key 2"),
    ("payment", "payment", "bank.example", sha256(b"challenge 5"), 7, sha256(b"canonical transaction"), "bioauth test key 1"),
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
