"""The log's Ed25519 signatures: keys in every form the settings take, and signatures that
read the same whichever library made them (logs signed before libsodium took over from OpenSSL
still verify, and a verifier elsewhere with OpenSSL reads ours)."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cardtable.platform.log_signing import (
    DOMAIN,
    BatchSigner,
    BatchVerifier,
    LogIntegrityError,
    LogKeyError,
    key_id_of,
    parse_public_keys,
)

PAYLOAD = b"\x08\x01\x12\x05table"


def openssl_key() -> tuple[Ed25519PrivateKey, bytes]:
    private = Ed25519PrivateKey.generate()
    raw_public = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return private, raw_public


def test_a_signature_openssl_made_verifies() -> None:
    private, public = openssl_key()
    header = (
        f"ed25519 {key_id_of(public)} " + base64.b64encode(private.sign(DOMAIN + PAYLOAD)).decode()
    )
    assert BatchVerifier([public]).verify(PAYLOAD, header) == key_id_of(public)
    with pytest.raises(LogIntegrityError, match="does not match"):
        BatchVerifier([public]).verify(PAYLOAD + b"!", header)


def test_our_signature_verifies_with_openssl_and_is_what_openssl_would_write() -> None:
    private, public = openssl_key()
    seed = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    signer = BatchSigner.from_text(base64.b64encode(seed).decode())
    assert signer.public_key == public
    header = signer.sign(PAYLOAD)
    signature = base64.b64decode(header.split(" ")[2])
    private.public_key().verify(signature, DOMAIN + PAYLOAD)  # raises if it does not hold
    assert signature == private.sign(DOMAIN + PAYLOAD)  # Ed25519 is deterministic


def test_keys_read_from_pem_are_the_same_keys() -> None:
    private, public = openssl_key()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    signer = BatchSigner.from_text(private_pem)
    assert signer.public_key == public
    assert parse_public_keys(public_pem + public_pem) == [public, public]
    round_trip = BatchSigner.from_text(signer.private_text())
    assert round_trip.sign(PAYLOAD) == signer.sign(PAYLOAD)


def test_a_signature_by_another_key_or_mangled_is_refused() -> None:
    signer, other = BatchSigner.generate(), BatchSigner.generate()
    verifier = BatchVerifier([signer.public_key])
    with pytest.raises(LogIntegrityError, match="unknown key"):
        verifier.verify(PAYLOAD, other.sign(PAYLOAD))
    forged = other.sign(PAYLOAD).replace(other.key_id, signer.key_id)
    with pytest.raises(LogIntegrityError, match="does not match"):
        verifier.verify(PAYLOAD, forged)
    with pytest.raises(LogIntegrityError, match="does not match"):
        verifier.verify(PAYLOAD, signer.sign(PAYLOAD)[:-8] + "AAAAAAA=")
    with pytest.raises(LogKeyError, match="32 bytes"):
        BatchSigner.from_text(base64.b64encode(b"short").decode())
