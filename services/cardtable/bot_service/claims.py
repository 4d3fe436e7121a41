"""Which replica plays which seat: one claim per seat in a NATS key-value bucket.

A claim is the key ``{table_id}.{seat}`` in ``{prefix}_BOT_SEATS``, written with
create-if-absent, so of several replicas offered the same seat exactly one gets it. The
holder renews its claims with compare-and-set on the revision (a third of the TTL apart); the
bucket's max age is the TTL, so the claims of a replica that died vanish on their own and
the seats go to whoever scans next. Letting go deletes the key at once.

A claim also works as a lease: the holder only moves for a seat while its last confirmed
renewal is recent enough (``LEASE_SHARE`` of the TTL), so a replica whose loop stalled past
the TTL stops before another one could have taken the seat over. Even then, a move carries
the version it was chosen at, and the rules refuse a seat's second act in a simultaneous phase,
so two replicas can never both move (their command ids differ: the log scopes ids to callers).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import nats.errors
from nats.js import JetStreamContext, api
from nats.js.errors import (
    APIError,
    BadRequestError,
    BucketNotFoundError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue

from cardtable.platform.logging import get_logger

#: Renew this often, as a share of the TTL: two renewals may fail before a claim expires.
RENEW_SHARE = 1 / 3
#: Move only while the last confirmed renewal is younger than this share of the TTL.
LEASE_SHARE = 0.75
#: Errors that mean NATS is unreachable for now, not that the claim is someone else's.
TRANSIENT_ERRORS = (nats.errors.Error, APIError, TimeoutError)

_log = get_logger(__name__)

SeatKey = tuple[str, int]


@dataclass
class Claim:
    table_id: str
    seat: int
    revision: int
    #: Monotonic time at which the write that confirmed the claim was sent.
    confirmed_at: float


class ClaimsUnavailableError(Exception):
    """NATS did not answer: nothing is known about the claim."""


class SeatClaims:
    """This replica's claims, and the calls that take, renew and release them."""

    def __init__(
        self,
        jetstream: JetStreamContext,
        bucket: str,
        replica_id: str,
        ttl_seconds: float,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._js = jetstream
        self._bucket_name = bucket
        self.replica_id = replica_id
        self.ttl_seconds = ttl_seconds
        self._now = now
        self._kv: KeyValue | None = None
        self._claims: dict[SeatKey, Claim] = {}

    async def open(self) -> None:
        """Open the bucket, creating it with our TTL if missing; adopt the TTL it has."""
        config = api.KeyValueConfig(
            bucket=self._bucket_name,
            history=1,
            ttl=self.ttl_seconds,
            storage=api.StorageType.FILE,
            description="cardtable bot service: which replica plays which seat",
        )
        try:
            self._kv = await self._js.key_value(self._bucket_name)
        except BucketNotFoundError:
            try:
                self._kv = await self._js.create_key_value(config)
            except BadRequestError:  # another replica created it a moment ago
                self._kv = await self._js.key_value(self._bucket_name)
        info = await self._js.stream_info(f"KV_{self._bucket_name}")
        bucket_ttl = info.config.max_age or 0.0
        if bucket_ttl and abs(bucket_ttl - self.ttl_seconds) > 1e-3:
            _log.warning(
                "claims bucket has another TTL; using it",
                extra={"bucket_ttl_seconds": bucket_ttl, "configured": self.ttl_seconds},
            )
            self.ttl_seconds = bucket_ttl

    @property
    def _bucket(self) -> KeyValue:
        if self._kv is None:
            raise RuntimeError("SeatClaims.open() was not awaited")
        return self._kv

    @property
    def renew_every_seconds(self) -> float:
        return self.ttl_seconds * RENEW_SHARE

    @staticmethod
    def key(table_id: str, seat: int) -> str:
        return f"{table_id}.{seat}"

    def _value(self) -> bytes:
        return json.dumps({"replica": self.replica_id, "at": time.time()}).encode()

    def held(self) -> list[SeatKey]:
        return list(self._claims)

    def due(self) -> list[SeatKey]:
        """The claims whose last confirmed renewal is a renewal interval old or more: those a
        renewal failed for stay due, so they are tried again at the next look."""
        oldest = self._now() - self.renew_every_seconds
        return [key for key, claim in self._claims.items() if claim.confirmed_at <= oldest]

    def holds(self, table_id: str, seat: int) -> bool:
        return (table_id, seat) in self._claims

    def lease_valid(self, table_id: str, seat: int) -> bool:
        """Whether this replica may move for the seat now (see the module doc)."""
        claim = self._claims.get((table_id, seat))
        return claim is not None and (
            self._now() - claim.confirmed_at < self.ttl_seconds * LEASE_SHARE
        )

    async def claim(self, table_id: str, seat: int) -> bool:
        """Take the seat if no replica holds it; True when it is ours."""
        key = self.key(table_id, seat)
        sent_at = self._now()
        try:
            revision = await self._bucket.create(key, self._value())
        except KeyWrongLastSequenceError:
            return await self._adopt_own(table_id, seat, sent_at)
        except KeyNotFoundError:  # it expired while the client looked at it: try next scan
            return False
        except TRANSIENT_ERRORS as error:
            raise ClaimsUnavailableError(repr(error)) from error
        self._claims[(table_id, seat)] = Claim(table_id, seat, revision, sent_at)
        return True

    async def _adopt_own(self, table_id: str, seat: int, sent_at: float) -> bool:
        """The key exists: ours only if it names this replica (a claim we forgot we made)."""
        try:
            entry = await self._bucket.get(self.key(table_id, seat))
        except KeyNotFoundError:
            return False  # expired meanwhile: the next scan tries again
        except TRANSIENT_ERRORS as error:
            raise ClaimsUnavailableError(repr(error)) from error
        try:
            holder = json.loads(entry.value or b"{}").get("replica")
        except ValueError:
            holder = None
        if holder != self.replica_id or entry.revision is None:
            return False
        self._claims[(table_id, seat)] = Claim(table_id, seat, entry.revision, sent_at)
        try:
            return await self.renew(table_id, seat)
        except ClaimsUnavailableError:
            # Not taken after all: a claim kept here would turn away every later offer of the
            # seat while no table player plays it. The next scan offers it again.
            del self._claims[(table_id, seat)]
            raise

    async def renew(self, table_id: str, seat: int) -> bool:
        """Extend a held claim; False (and forgotten) when another replica has it now.

        Raises :class:`ClaimsUnavailableError` when NATS does not answer: the claim is kept
        and its lease runs out unless a later renewal succeeds.
        """
        claim = self._claims.get((table_id, seat))
        if claim is None:
            return False
        key = self.key(table_id, seat)
        sent_at = self._now()
        try:
            claim.revision = await self._bucket.update(key, self._value(), last=claim.revision)
        except KeyWrongLastSequenceError:
            # Expired (nobody took it: create succeeds), taken by another replica, or still
            # ours at a revision we never heard of (a renewal whose reply was lost).
            try:
                claim.revision = await self._bucket.create(key, self._value())
            except KeyWrongLastSequenceError:
                if not await self._renew_unheard(claim, key):
                    del self._claims[(table_id, seat)]
                    return False
            except KeyNotFoundError:
                del self._claims[(table_id, seat)]
                return False
            except TRANSIENT_ERRORS as error:
                raise ClaimsUnavailableError(repr(error)) from error
        except TRANSIENT_ERRORS as error:
            raise ClaimsUnavailableError(repr(error)) from error
        claim.confirmed_at = sent_at
        return True

    async def _renew_unheard(self, claim: Claim, key: str) -> bool:
        """Renew a claim whose key names this replica at a revision it did not record."""
        try:
            entry = await self._bucket.get(key)
            holder = json.loads(entry.value or b"{}").get("replica")
            if holder != self.replica_id or entry.revision is None:
                return False
            claim.revision = await self._bucket.update(key, self._value(), last=entry.revision)
        except (KeyNotFoundError, KeyWrongLastSequenceError, ValueError):
            return False
        except TRANSIENT_ERRORS as error:
            raise ClaimsUnavailableError(repr(error)) from error
        return True

    async def release(self, table_id: str, seat: int) -> None:
        """Let go of the seat so that another replica may take it at once."""
        claim = self._claims.pop((table_id, seat), None)
        if claim is None:
            return
        try:
            await self._bucket.delete(self.key(table_id, seat), last=claim.revision)
        except (*TRANSIENT_ERRORS, KeyWrongLastSequenceError) as error:
            # Not ours any more, or NATS is away: the claim expires with its TTL anyway.
            _log.info(
                "claim not deleted",
                extra={"table_id": table_id, "seat": seat, "error": repr(error)},
            )

    def forget(self, table_id: str, seat: int) -> None:
        """Drop a claim without writing (it is already someone else's)."""
        self._claims.pop((table_id, seat), None)

    async def release_all(self) -> None:
        await asyncio.gather(*(self.release(table, seat) for table, seat in self.held()))
