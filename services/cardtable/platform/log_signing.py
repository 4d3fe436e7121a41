"""Signed, hash-chained batches: who wrote a table's log, and that none of it was changed.

Every batch the table service appends names the SHA-256 of the table's previous stored batch
(``EventBatch.previous_batch_sha256``) and is signed with the table service's Ed25519 key; the
signature travels in the message's ``Cardtable-Signature`` header as
``ed25519 <key id> <base64 signature>`` over the stored bytes. A key id is the first 16 hex
digits of SHA-256 of the raw public key, so it cannot disagree with the key it names.

Batches appended together may share one signature (``BatchSigner.sign_many``): the signature
covers the root of a Merkle tree over their stored bytes (platform/merkle.py), and each batch's
header, ``ed25519-tree <key id> <base64 signature> <index>/<size> <base64 proof>``, carries its
place in the tree and the sibling hashes up to the root, so each batch is still checked on its
own. A verifier remembers the roots it has verified, so the batches of one tree cost one
Ed25519 verification between them.

:class:`ChainCheck` follows one table's batches in log order and raises
:class:`LogIntegrityError` on a batch that is unsigned where signing is due, signed by an
unknown key, signed wrongly, or that does not follow the previous batch (altered, removed,
reordered or replayed). A batch stored before signing began in the stream
(``signed_from_sequence``) is accepted as *written before signing*, and never called signed.

Keys are given as base64 of the raw 32 bytes (private: the seed; public: the point) or as PEM.
Signing and verifying go through libsodium (PyNaCl), about twice as fast as OpenSSL's Ed25519
through ``cryptography`` (docs/proving-it.md); ``cryptography`` only reads PEM. Ed25519 is
deterministic, so either writes the same signature and reads the other's.

    >>> signer = BatchSigner.generate()
    >>> header = signer.sign(b"batch bytes")
    >>> verifier = BatchVerifier([signer.public_key])
    >>> verifier.verify(b"batch bytes", header) == signer.key_id
    True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from cardtable.platform import merkle
from cardtable_api.events.v1 import events_pb2

SIGNATURE_HEADER = "Cardtable-Signature"
ALGORITHM = "ed25519"
#: A signature over the root of a tree of batches (module doc).
TREE_ALGORITHM = "ed25519-tree"
#: Signatures cover this prefix and the batch, so they mean nothing in any other context.
DOMAIN = b"cardtable event batch v1\x00"
#: Tree signatures cover this prefix, the tree's size and its root: never a batch's signature.
TREE_DOMAIN = b"cardtable event batch tree v1\x00"
#: Batches one tree signature covers at most: a proof holds at most eight hashes.
MAX_TREE_LEAVES = 256
#: Tree roots a verifier remembers as verified (the batches of one tree arrive close together).
VERIFIED_ROOTS_KEPT = 1024
#: The stream metadata key naming the first sequence whose batches must be signed.
SIGNED_FROM_METADATA = "cardtable_signed_from_sequence"


class LogKeyError(ValueError):
    """A key given in the configuration cannot be read."""


class LogIntegrityError(Exception):
    """A batch of a table's log fails verification; ``reason`` says how."""

    def __init__(self, reason: str, sequence: int = 0, version: int = 0) -> None:
        where = f"batch at stream sequence {sequence}" if sequence else "a batch"
        if version:
            where += f" (table version {version})"
        super().__init__(f"{where}: {reason}")
        self.reason = reason
        self.sequence = sequence
        self.version = version


def batch_sha256(payload: bytes) -> bytes:
    """The digest the next batch of the same table names as its predecessor."""
    return hashlib.sha256(payload).digest()


def _raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(public_key: bytes) -> str:
    """The id a signature names its key by."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def _decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise LogKeyError(f"{what} is neither PEM nor base64") from None


def load_private_key(text: str) -> SigningKey:
    """An Ed25519 private key from PEM (PKCS#8) or base64 of its 32-byte seed."""
    if "-----BEGIN" in text:
        key = serialization.load_pem_private_key(text.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise LogKeyError("the log signing key is not an Ed25519 key")
        raw = key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return SigningKey(raw)
    raw = _decode(text, "the log signing key")
    if len(raw) != 32:
        raise LogKeyError("the log signing key must be 32 bytes (base64 of an Ed25519 seed)")
    return SigningKey(raw)


def load_public_key(text: str) -> bytes:
    """The raw 32 bytes of an Ed25519 public key given as PEM or base64."""
    if "-----BEGIN" in text:
        key = serialization.load_pem_public_key(text.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise LogKeyError("a log verifying key is not an Ed25519 key")
        return _raw_public(key)
    raw = _decode(text, "a log verifying key")
    if len(raw) != 32:
        raise LogKeyError("a log verifying key must be 32 bytes (base64 of an Ed25519 key)")
    return raw


def parse_public_keys(text: str) -> list[bytes]:
    """Public keys separated by commas or whitespace (base64), or PEM blocks one after another."""
    if "-----BEGIN" in text:
        blocks = text.split("-----END PUBLIC KEY-----")
        return [
            load_public_key(block + "-----END PUBLIC KEY-----")
            for block in blocks
            if "BEGIN" in block
        ]
    return [load_public_key(part) for part in text.replace(",", " ").split() if part]


class BatchSigner:
    """Signs batches with the table service's private key."""

    def __init__(self, private_key: SigningKey) -> None:
        self._private = private_key
        self.public_key = bytes(private_key.verify_key)
        self.key_id = key_id_of(self.public_key)
        self._prefix = f"{ALGORITHM} {self.key_id} "

    @classmethod
    def generate(cls) -> BatchSigner:
        """A signer with a fresh key (development stacks and tests)."""
        return cls(SigningKey.generate())

    @classmethod
    def from_text(cls, text: str) -> BatchSigner:
        return cls(load_private_key(text))

    def private_text(self) -> str:
        """The private key as base64 of its seed, the form ``LOG_SIGNING_KEY`` takes."""
        return base64.b64encode(bytes(self._private)).decode()

    def public_text(self) -> str:
        """The public key as base64, the form ``LOG_VERIFYING_KEYS`` takes."""
        return base64.b64encode(self.public_key).decode()

    def sign(self, payload: bytes) -> str:
        """The ``Cardtable-Signature`` header value for ``payload``."""
        signature = self._private.sign(DOMAIN + payload).signature
        return self._prefix + base64.b64encode(signature).decode()

    def sign_many(self, payloads: Sequence[bytes]) -> list[str]:
        """A header for each of ``payloads``, with one signature per tree of up to
        ``MAX_TREE_LEAVES`` of them (one payload alone is signed as by :meth:`sign`)."""
        if len(payloads) == 1:
            return [self.sign(payloads[0])]
        headers: list[str] = []
        for start in range(0, len(payloads), MAX_TREE_LEAVES):
            headers += self._sign_tree(payloads[start : start + MAX_TREE_LEAVES])
        return headers

    def _sign_tree(self, payloads: Sequence[bytes]) -> list[str]:
        size = len(payloads)
        root, proofs = merkle.tree(payloads)
        signature = self._private.sign(_tree_message(size, root)).signature
        prefix = f"{TREE_ALGORITHM} {self.key_id} {base64.b64encode(signature).decode()} "
        return [
            f"{prefix}{index}/{size} {base64.b64encode(b''.join(proof)).decode()}"
            for index, proof in enumerate(proofs)
        ]


def _tree_message(size: int, root: bytes) -> bytes:
    """What a tree signature signs: the size is in it, so a proof cannot claim another tree."""
    return TREE_DOMAIN + size.to_bytes(4, "big") + root


@dataclass(frozen=True)
class SignedBatch:
    """One stored batch as the checks read it: its bytes, headers and parsed form."""

    payload: bytes
    headers: Mapping[str, str] | None
    batch: events_pb2.EventBatch


def vouched_batches(verifier: BatchVerifier, batches: Sequence[SignedBatch]) -> int:
    """How many of one table's consecutive ``batches`` (in log order), counted from the last
    back, are authentic with one signature verified: the last batch's.

    A batch names its predecessor's SHA-256 (``previous_batch_sha256``) in its signed bytes, so
    a verified signature vouches for the exact bytes of the batch before it, and so on back as
    long as each link holds. A group of one table's batches then costs one Ed25519
    verification instead of one each. 0 when the last signature does not verify (or is
    missing): each batch is then checked on its own, which names the bad one.
    """
    if not batches:
        return 0
    last = batches[-1]
    header = (last.headers or {}).get(SIGNATURE_HEADER)
    if header is None:
        return 0
    try:
        verifier.verify(last.payload, header)
    except LogIntegrityError:
        return 0
    vouched = 1
    for earlier, later in zip(reversed(batches[:-1]), reversed(batches[1:]), strict=True):
        if batch_sha256(earlier.payload) != later.batch.previous_batch_sha256:
            break
        vouched += 1
    return vouched


def _header_parts(header: str) -> list[str]:
    """A signature header's parts: the algorithm, the key id, the base64 signature and, for a
    tree signature, the place (``index/size``) and the base64 proof; LogIntegrityError if
    malformed."""
    parts = header.split(" ")
    if not (
        (len(parts) == 3 and parts[0] == ALGORITHM)
        or (len(parts) == 5 and parts[0] == TREE_ALGORITHM)
    ):
        raise LogIntegrityError(f"the signature header is malformed ({header[:40]!r})")
    return parts


class BatchVerifier:
    """Checks signatures against known public keys (the current one and retired ones)."""

    def __init__(self, public_keys: Iterable[bytes]) -> None:
        self._keys: dict[str, VerifyKey] = {}
        self.public_keys: dict[str, bytes] = {}
        for raw in public_keys:
            key_id = key_id_of(raw)
            self._keys[key_id] = VerifyKey(raw)
            self.public_keys[key_id] = raw
        #: Signed tree messages (with their signature and key id) verified already.
        self._verified_roots: OrderedDict[bytes, None] = OrderedDict()
        #: Ed25519 verifications made (a remembered tree root costs none).
        self.verifications = 0

    def verify(self, payload: bytes, header: str) -> str:
        """The key id that signed ``payload``; :class:`LogIntegrityError` otherwise."""
        parts = _header_parts(header)
        key_id = parts[1]
        key = self._keys.get(key_id)
        if key is None:
            raise LogIntegrityError(f"signed by unknown key {key_id[:16]!r}")
        try:
            signature = base64.b64decode(parts[2], validate=True)
            if parts[0] == TREE_ALGORITHM:
                self._verify_tree(key, key_id, payload, signature, parts[3], parts[4])
            else:
                self.verifications += 1
                key.verify(DOMAIN + payload, signature)
        except (binascii.Error, ValueError, BadSignatureError):
            raise LogIntegrityError(f"the signature by key {key_id} does not match") from None
        return key_id

    def _verify_tree(
        self, key: VerifyKey, key_id: str, payload: bytes, signature: bytes, place: str, proof: str
    ) -> None:
        """Raises ValueError or BadSignatureError unless ``payload`` is the leaf at ``place`` of
        a tree whose root ``signature`` signs."""
        index_text, _, size_text = place.partition("/")
        if not (index_text.isdigit() and size_text.isdigit()):
            raise ValueError("malformed place in the tree")
        index, size = int(index_text), int(size_text)
        hashes = base64.b64decode(proof, validate=True)
        if not 1 < size <= MAX_TREE_LEAVES or len(hashes) % merkle.HASH_SIZE:
            raise ValueError("impossible tree")
        path = [
            hashes[start : start + merkle.HASH_SIZE]
            for start in range(0, len(hashes), merkle.HASH_SIZE)
        ]
        root = merkle.root_from_proof(merkle.leaf_hash(payload), index, size, path)
        if root is None:
            raise ValueError("the proof does not fit the tree")
        message = _tree_message(size, root)
        remembered = key_id.encode() + signature + message
        if remembered in self._verified_roots:
            self._verified_roots.move_to_end(remembered)
            return
        self.verifications += 1
        key.verify(message, signature)
        self._verified_roots[remembered] = None
        if len(self._verified_roots) > VERIFIED_ROOTS_KEPT:
            self._verified_roots.popitem(last=False)


def signed_from_sequence(metadata: Mapping[str, str] | None) -> int:
    """The first stream sequence whose batches must be signed (1: all of them).

    Provisioning records it in the stream's metadata when it finds a stream written before
    signing; a stream without the record requires every batch to be signed.
    """
    value = (metadata or {}).get(SIGNED_FROM_METADATA, "")
    return int(value) if value.isdigit() and int(value) > 0 else 1


def check_next(
    verifier: BatchVerifier,
    payload: bytes,
    headers: Mapping[str, str] | None,
    sequence: int,
    batch: events_pb2.EventBatch,
    *,
    last_sha256: bytes,
    last_version: int,
    signed_before: bool,
    signed_from: int,
    vouched: bool = False,
) -> str | None:
    """Check the next batch of a table (its stored bytes, headers and parsed form) against
    what came before; the signing key id, or None for a batch written before signing.

    A ``vouched`` batch's signature is not verified again: :func:`vouched_batches` has
    authenticated its bytes already. Its header must still be there, and its chain link hold.

    Raises :class:`LogIntegrityError` naming the batch.
    """
    version = batch.table_version
    header = (headers or {}).get(SIGNATURE_HEADER)
    if header is None:
        if sequence >= signed_from or signed_before:
            raise LogIntegrityError("the batch is not signed", sequence, version)
        key_id = None
    else:
        try:
            key_id = _header_parts(header)[1] if vouched else verifier.verify(payload, header)
        except LogIntegrityError as error:
            raise LogIntegrityError(error.reason, sequence, version) from None
        if batch.previous_batch_sha256 != last_sha256:
            raise LogIntegrityError(
                "it does not follow the table's previous batch (a batch was removed, "
                "reordered, altered or replayed)",
                sequence,
                version,
            )
    if version != last_version + 1:
        raise LogIntegrityError(
            f"table version {version} follows version {last_version}", sequence, version
        )
    return key_id


@dataclass
class ChainCheck:
    """One table's batches in log order: each signed (where due) and following the last."""

    verifier: BatchVerifier
    signed_from: int = 1
    #: The digest of the last batch checked (empty before the first).
    last_sha256: bytes = b""
    #: The table version of the last batch checked.
    version: int = 0
    #: Batches accepted as written before signing, and the key ids of the signed ones.
    unsigned: int = 0
    signers: dict[str, int] = field(default_factory=dict)

    def check(
        self,
        payload: bytes,
        headers: Mapping[str, str] | None,
        sequence: int,
        batch: events_pb2.EventBatch,
    ) -> str | None:
        """Accept the next batch; the key id, or None for one written before signing."""
        key_id = check_next(
            self.verifier,
            payload,
            headers,
            sequence,
            batch,
            last_sha256=self.last_sha256,
            last_version=self.version,
            signed_before=bool(self.signers),
            signed_from=self.signed_from,
        )
        if key_id is None:
            self.unsigned += 1
        else:
            self.signers[key_id] = self.signers.get(key_id, 0) + 1
        self.last_sha256 = batch_sha256(payload)
        self.version = batch.table_version
        return key_id

    def restart_after(self, payload: bytes, batch: events_pb2.EventBatch) -> None:
        """Go on from a batch that failed, so that one bad batch is not blamed on every later
        one (an audit names each problem once)."""
        self.last_sha256 = batch_sha256(payload)
        self.version = batch.table_version
