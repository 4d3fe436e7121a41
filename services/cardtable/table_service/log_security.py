"""What the table service writes into the log, and what it takes out of it.

Out: each batch's hidden events sealed under their deal's key (platform/deal_sealing.py), each
ended deal's key published beside its seed, the batch chained to the table's previous one and
signed (platform/log_signing.py). In: every batch read back from the stream is verified (the
signature, the chain link, the version) before it is folded, and its sealed events opened.

A batch that fails verification makes its table read-only: nothing after it is folded, every
command is refused (``LogIntegrityError``, DATA_LOSS to clients), and the service logs it at
ERROR and counts it, which is what an operator alerts on (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cardtable.eventlog.store import StoredBatch
from cardtable.platform.deal_sealing import SealingKeyError, SealingKeys
from cardtable.platform.log_signing import (
    BatchSigner,
    BatchVerifier,
    LogIntegrityError,
    LogKeyError,
    SignedBatch,
    batch_sha256,
    check_next,
    parse_public_keys,
    vouched_batches,
)
from cardtable.platform.settings import EnvReader
from cardtable.table_service.signing_queue import SigningQueue
from cardtable.table_service.state import TableState
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

PUBLIC = common_pb2.Audience.KIND_PUBLIC

#: Told of every batch that failed verification: the table id and the failure.
IntegrityListener = Callable[[str, LogIntegrityError], None]


@dataclass
class LogSecurity:
    """The table service's keys: it signs and seals with the current ones, verifies and opens
    with current and retired ones."""

    signer: BatchSigner
    sealing: SealingKeys
    #: Public keys of retired signing keys, still accepted on batches signed before rotation.
    retired_public_keys: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        self.verifier = BatchVerifier((self.signer.public_key, *self.retired_public_keys))
        #: Batches ready in the same turn of the event loop share a signature.
        self.signing = SigningQueue(self.signer)

    @classmethod
    def generate(cls) -> LogSecurity:
        """Fresh keys, for tests and development stacks that make their own."""
        return cls(BatchSigner.generate(), SealingKeys.generate())

    def environment(self) -> dict[str, str]:
        """These keys as the settings a table service process reads (read_log_security)."""
        return {
            "LOG_SIGNING_KEY": self.signer.private_text(),
            "DEAL_SEALING_KEY": self.sealing.current_text(),
        }

    def service_environment(self, service: str) -> dict[str, str]:
        """What of these keys a process of ``service`` is given: the private ones to the table
        service only, the public key to the scoring service (and to nobody else: the bot
        service never reads the log)."""
        if service == "table":
            return self.environment()
        if service == "scoring":
            return self.verifying_environment()
        return {}

    def verifying_environment(self) -> dict[str, str]:
        """The public key as the setting the scoring service and the audit read."""
        return {"LOG_VERIFYING_KEYS": self.signer.public_text()}

    # -- out ------------------------------------------------------------------------------------
    def sealed(
        self, state: TableState, deal_number: int, events: Iterable[events_pb2.Event]
    ) -> list[events_pb2.Event]:
        """``events`` as the log stores them, ``deal_number`` being the deal in play before them.

        On the way, each new deal is marked with the sealing key it is sealed under and each
        revealed deal gets its key: both changes are made to the events themselves, so the
        service's own fold and its clients see them too.
        """
        table_id = state.table_id
        key_of = {number: proof.sealing_key_id for number, proof in state.deals.items()}
        stored: list[events_pb2.Event] = []
        for event in events:
            which = event.WhichOneof("body")
            if which == "deal_committed":
                committed = event.deal_committed
                committed.sealing_key_id = self.sealing.current_id
                key_of[committed.deal_number] = committed.sealing_key_id
                deal_number = committed.deal_number
            elif which == "deal_seed_revealed":
                revealed = event.deal_seed_revealed
                revealed.deal_key = self.sealing.deal_key(
                    table_id, revealed.deal_number, key_of.get(revealed.deal_number, "")
                )
            if event.audience.kind == PUBLIC:
                stored.append(event)
                continue
            if not deal_number:
                raise AssertionError(f"a hidden {which} event outside any deal")
            stored.append(
                self.sealing.seal(event, table_id, deal_number, key_of.get(deal_number, ""))
            )
        return stored

    async def signature(self, payload: bytes) -> str:
        """The signature header for ``payload``, shared with the batches ready beside it."""
        return await self.signing.signature(payload)

    # -- in -------------------------------------------------------------------------------------
    def vouched(self, batches: Sequence[StoredBatch]) -> int:
        """How many of one table's ``batches`` (in log order), counted from the last back, one
        verified signature authenticates through their chain links
        (``log_signing.vouched_batches``): those need no verification of their own."""
        chain = [SignedBatch(stored.payload, stored.headers, stored.batch) for stored in batches]
        return vouched_batches(self.verifier, chain)

    def verify(
        self, state: TableState, stored: StoredBatch, signed_from: int, *, vouched: bool = False
    ) -> None:
        """Check the next stored batch of ``state``'s table; :class:`LogIntegrityError` if not.
        A ``vouched`` batch (see :meth:`vouched`) has every check but its own signature's."""
        if stored.batch.table_id != state.table_id:
            raise LogIntegrityError(
                f"the batch belongs to table {stored.batch.table_id!r}",
                stored.sequence,
                stored.batch.table_version,
            )
        key_id = check_next(
            self.verifier,
            stored.payload,
            stored.headers,
            stored.sequence,
            stored.batch,
            last_sha256=state.last_batch_sha256,
            last_version=state.version,
            signed_before=state.signed,
            signed_from=signed_from,
            vouched=vouched,
        )
        state.signed = state.signed or key_id is not None

    def opened(self, table_id: str, batch: events_pb2.EventBatch) -> events_pb2.EventBatch:
        """``batch`` with its sealed events opened (the same object when none is sealed)."""
        if not any(event.HasField("sealed") for event in batch.events):
            return batch
        plain = events_pb2.EventBatch()
        plain.CopyFrom(batch)
        del plain.events[:]
        plain.events.extend(self.open_event(table_id, event) for event in batch.events)
        return plain

    def open_event(self, table_id: str, event: events_pb2.Event) -> events_pb2.Event:
        return self.sealing.open(event, table_id) if event.HasField("sealed") else event


def read_log_security(env: EnvReader) -> LogSecurity:
    """``LOG_SIGNING_KEY``, ``LOG_RETIRED_PUBLIC_KEYS``, ``DEAL_SEALING_KEY`` and
    ``DEAL_SEALING_PREVIOUS_KEYS`` (each also as ``..._FILE``): the keys only table service
    replicas hold (docs/security.md says how to make and rotate them)."""
    signing = env.secret(
        "LOG_SIGNING_KEY", required=True, example="base64 of 32 random bytes (an Ed25519 seed)"
    )
    sealing = env.secret(
        "DEAL_SEALING_KEY", required=True, example="base64 of 32 random bytes (an AES-256 key)"
    )
    retired = env.secret("LOG_RETIRED_PUBLIC_KEYS")
    previous = env.secret("DEAL_SEALING_PREVIOUS_KEYS")
    placeholder = LogSecurity.generate()
    try:
        signer = BatchSigner.from_text(signing) if signing else placeholder.signer
        retired_keys = tuple(parse_public_keys(retired))
    except (LogKeyError, ValueError) as error:
        env.problem(f"LOG_SIGNING_KEY / LOG_RETIRED_PUBLIC_KEYS: {error}")
        return placeholder
    try:
        keys = (
            SealingKeys.from_text(sealing, previous.replace(",", " ").split())
            if sealing
            else placeholder.sealing
        )
    except SealingKeyError as error:
        env.problem(f"DEAL_SEALING_KEY / DEAL_SEALING_PREVIOUS_KEYS: {error}")
        return placeholder
    return LogSecurity(signer, keys, retired_keys)


def chain_after(state: TableState, payload: bytes) -> None:
    """Remember ``payload`` as the table's last stored batch (the next one's chain link)."""
    state.last_batch_sha256 = batch_sha256(payload)
