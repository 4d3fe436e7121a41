"""Sealed deals: a deal's hidden events are stored encrypted until the deal is over.

Anyone who may read the events stream (the scoring service, an operator, an intruder with
their credentials) would otherwise learn every hand of every running game from it. So every
event whose audience is not public (the shuffle, the cards dealt to a seat, cards passed or
discarded) is stored as a ``SealedEvent``: AES-256-GCM under a key of its own deal.

A deal's key is derived (HKDF-SHA256) from the table service's sealing key, the table id and
the deal number, so the service keeps no per-deal secret and every replica derives the same
key. When the deal ends the table service publishes that key (``DealSeedRevealed.deal_key``),
beside the seed that reproduces the whole deck: from then on anyone holding the log can open
the deal's events, and they teach nothing the seed and the play did not. The sealing key itself
never leaves the table service; a derived deal key opens one deal of one table and nothing else.

Sealing keys rotate: each has an id (from the key itself), a deal records the id it was sealed
under (``DealCommitted.sealing_key_id``), and the service keeps retired keys for the deals
still running under them (``DEAL_SEALING_PREVIOUS_KEYS``).

    >>> keys = SealingKeys.generate()
    >>> event = events_pb2.Event(audience=common_pb2.Audience(kind=3),
    ...                          deal_shuffled=events_pb2.DealShuffled(seed="ab"))
    >>> sealed = keys.seal(event, "t1", 1, keys.current_id)
    >>> deal_key = keys.deal_key("t1", 1, keys.current_id)
    >>> sealed.WhichOneof("body"), open_event(sealed, "t1", deal_key) == event
    ('sealed', True)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Iterable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

KEY_BYTES = 32
NONCE_BYTES = 12
_DEAL_KEY_INFO = b"cardtable deal key v1\x00"
_AAD_PREFIX = b"cardtable sealed event v1\x00"


class SealingKeyError(ValueError):
    """A sealing key cannot be read, or the key a deal needs is not configured."""


class UnsealError(Exception):
    """A sealed event cannot be opened with the key given (wrong key, or altered)."""


def sealing_key_id(key: bytes) -> str:
    """A key's id: a keyed digest, which names the key without revealing anything of it."""
    return hmac.new(key, b"cardtable sealing key id", hashlib.sha256).hexdigest()[:16]


def load_sealing_key(text: str) -> bytes:
    """A 32-byte key given as base64."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise SealingKeyError("a deal sealing key must be base64") from None
    if len(raw) != KEY_BYTES:
        raise SealingKeyError(f"a deal sealing key must be {KEY_BYTES} bytes (base64)")
    return raw


def _aad(table_id: str, deal_number: int, key_id: str, audience: common_pb2.Audience) -> bytes:
    """What the ciphertext is bound to: its table, deal, key and visible audience."""
    return b"\x00".join(
        (
            _AAD_PREFIX,
            table_id.encode(),
            str(deal_number).encode(),
            key_id.encode(),
            audience.SerializeToString(deterministic=True),
        )
    )


class SealingKeys:
    """The current sealing key and the retired ones still needed, by id."""

    def __init__(self, current: bytes, previous: Iterable[bytes] = ()) -> None:
        self.current_id = sealing_key_id(current)
        self._keys = {sealing_key_id(key): key for key in (*previous, current)}

    @classmethod
    def generate(cls) -> SealingKeys:
        """Fresh keys (development stacks and tests)."""
        return cls(os.urandom(KEY_BYTES))

    @classmethod
    def from_text(cls, current: str, previous: Iterable[str] = ()) -> SealingKeys:
        return cls(load_sealing_key(current), [load_sealing_key(text) for text in previous])

    @property
    def key_ids(self) -> list[str]:
        return sorted(self._keys)

    def current_text(self) -> str:
        """The current key as base64, the form ``DEAL_SEALING_KEY`` takes."""
        return base64.b64encode(self._keys[self.current_id]).decode()

    def deal_key(self, table_id: str, deal_number: int, key_id: str) -> bytes:
        """The key of one deal of one table, derived from sealing key ``key_id``."""
        master = self._keys.get(key_id)
        if master is None:
            raise SealingKeyError(
                f"deal {deal_number} of table {table_id} is sealed under key {key_id}, which "
                "is not configured (keep retired keys in DEAL_SEALING_PREVIOUS_KEYS until "
                "the deals sealed under them are over)"
            )
        info = _DEAL_KEY_INFO + table_id.encode() + b"\x00" + str(deal_number).encode()
        return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(
            master
        )

    def seal(
        self, event: events_pb2.Event, table_id: str, deal_number: int, key_id: str
    ) -> events_pb2.Event:
        """``event`` as stored: its audience in the clear, the rest encrypted."""
        nonce = os.urandom(NONCE_BYTES)
        key = self.deal_key(table_id, deal_number, key_id)
        ciphertext = AESGCM(key).encrypt(
            nonce,
            event.SerializeToString(),
            _aad(table_id, deal_number, key_id, event.audience),
        )
        return events_pb2.Event(
            audience=event.audience,
            sealed=events_pb2.SealedEvent(
                deal_number=deal_number,
                sealing_key_id=key_id,
                nonce=nonce,
                ciphertext=ciphertext,
            ),
        )

    def open(self, event: events_pb2.Event, table_id: str) -> events_pb2.Event:
        """A sealed event opened with the service's own keys."""
        sealed = event.sealed
        key = self.deal_key(table_id, sealed.deal_number, sealed.sealing_key_id)
        return open_event(event, table_id, key)


def open_event(event: events_pb2.Event, table_id: str, deal_key: bytes) -> events_pb2.Event:
    """A sealed event opened with its deal's key (published once the deal is over)."""
    sealed = event.sealed
    try:
        plain = AESGCM(deal_key).decrypt(
            sealed.nonce,
            sealed.ciphertext,
            _aad(table_id, sealed.deal_number, sealed.sealing_key_id, event.audience),
        )
    except (InvalidTag, ValueError):
        raise UnsealError(
            f"a sealed event of deal {sealed.deal_number} does not open with the key given"
        ) from None
    return events_pb2.Event.FromString(plain)
