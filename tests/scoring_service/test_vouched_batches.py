"""One signature verified per table and group: its chain links vouch for the batches before it.

The projection folds a group of batches per transaction. Each batch names its predecessor's
SHA-256 inside its signed bytes, so the last batch of a table in the group, once its signature
verifies, authenticates every earlier one whose link holds. Whatever an attacker changes, adds
or strips must still be caught, and the batch at fault named.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from cardtable.platform.log_signing import (
    SIGNATURE_HEADER,
    BatchSigner,
    BatchVerifier,
    SignedBatch,
    batch_sha256,
    vouched_batches,
)
from cardtable.scoring_service.messages import DecodedBatch, PoisonMessageError
from cardtable.scoring_service.projection import Projection
from cardtable_api.common.v1 import common_pb2
from cardtable_api.events.v1 import events_pb2

TABLE = "0b5e1c52-0000-4000-8000-00000000000a"
PUBLIC = common_pb2.Audience(kind=common_pb2.Audience.KIND_PUBLIC)
SIGNER = BatchSigner.generate()
STORED_AT = datetime(2026, 12, 3, tzinfo=UTC)


class CountingVerifier(BatchVerifier):
    """The real verifier, counting the signatures it checks."""

    def __init__(self) -> None:
        super().__init__([SIGNER.public_key])
        self.verified = 0

    def verify(self, payload: bytes, header: str) -> str:
        self.verified += 1
        return super().verify(payload, header)


@dataclass
class Stored:
    sequence: int
    payload: bytes
    headers: dict[str, str]
    batch: events_pb2.EventBatch

    def signed(self) -> SignedBatch:
        return SignedBatch(self.payload, self.headers, self.batch)

    def decoded(self) -> DecodedBatch:
        return DecodedBatch(
            sequence=self.sequence,
            table_id=TABLE,
            batch=self.batch,
            stored_at=STORED_AT,
            payload=self.payload,
            headers=self.headers,
        )


def _chain(length: int) -> list[Stored]:
    """A table's first ``length`` batches as the table service writes them: chained, signed."""
    chain: list[Stored] = []
    previous = b""
    for version in range(1, length + 1):
        event = (
            events_pb2.Event(
                audience=PUBLIC, table_created=events_pb2.TableCreated(game="hearts", seats=4)
            )
            if version == 1
            else events_pb2.Event(
                audience=PUBLIC,
                player_seated=events_pb2.PlayerSeated(
                    seat=(version - 2) % 4, player_id=f"p{version}"
                ),
            )
        )
        batch = events_pb2.EventBatch(
            schema_version=1,
            table_id=TABLE,
            command_id=f"c{version}",
            table_version=version,
            previous_batch_sha256=previous,
            events=[event],
        )
        payload = batch.SerializeToString()
        chain.append(Stored(version, payload, {SIGNATURE_HEADER: SIGNER.sign(payload)}, batch))
        previous = batch_sha256(payload)
    return chain


def _altered(stored: Stored) -> Stored:
    """The batch with one value changed and its old signature kept (no key to sign anew)."""
    batch = events_pb2.EventBatch()
    batch.CopyFrom(stored.batch)
    batch.events[0].player_seated.player_id = "mallory"
    return Stored(stored.sequence, batch.SerializeToString(), dict(stored.headers), batch)


def test_one_verified_signature_vouches_for_a_whole_intact_chain() -> None:
    verifier = CountingVerifier()
    chain = _chain(5)
    assert vouched_batches(verifier, [s.signed() for s in chain]) == 5
    assert verifier.verified == 1


@pytest.mark.parametrize("altered_at", [0, 2, 3])
def test_an_altered_batch_breaks_the_links_after_which_nothing_is_vouched(altered_at: int) -> None:
    chain = _chain(5)
    chain[altered_at] = _altered(chain[altered_at])
    # the batch after it names the original's digest, not the altered one's
    assert vouched_batches(CountingVerifier(), [s.signed() for s in chain]) == 4 - altered_at


@pytest.mark.parametrize("damage", ["forged", "stripped", "altered"])
def test_a_bad_last_batch_vouches_for_nothing(damage: str) -> None:
    chain = _chain(4)
    if damage == "forged":
        chain[-1].headers[SIGNATURE_HEADER] = BatchSigner.generate().sign(chain[-1].payload)
    elif damage == "stripped":
        chain[-1].headers.clear()
    else:
        chain[-1] = _altered(chain[-1])
    assert vouched_batches(CountingVerifier(), [s.signed() for s in chain]) == 0


def _fold(chain: list[Stored], verifier: BatchVerifier) -> tuple[Projection, list[int]]:
    """Vouch for the group, then apply it in order up to the first refusal."""
    projection = Projection({}, verifier)
    projection.vouch([stored.decoded() for stored in chain])
    applied: list[int] = []
    for stored in chain:
        try:
            projection.apply(stored.decoded())
        except PoisonMessageError:
            break
        applied.append(stored.sequence)
    return projection, applied


def test_a_group_of_one_tables_batches_costs_the_fold_one_verification() -> None:
    verifier = CountingVerifier()
    projection, applied = _fold(_chain(6), verifier)
    assert applied == [1, 2, 3, 4, 5, 6]
    assert verifier.verified == 1
    assert projection.tables[TABLE].game.table_version == 6


def test_an_altered_batch_in_a_group_is_still_refused_by_its_own_signature() -> None:
    chain = _chain(6)
    chain[3] = _altered(chain[3])
    verifier = CountingVerifier()
    projection, applied = _fold(chain, verifier)
    assert applied == [1, 2, 3]  # the altered fourth is poison, and the fold stops there
    # the last two, vouched for by the last signature, and the first three and the fourth,
    # each checked on its own
    assert verifier.verified == 1 + 4
    assert all(seat.player_id != "mallory" for seat in projection.tables[TABLE].seats.values())


def test_a_stripped_signature_is_refused_even_on_a_batch_the_chain_vouches_for() -> None:
    chain = _chain(4)
    chain[1].headers.clear()  # its bytes are authentic, but every batch must carry its signature
    _, applied = _fold(chain, CountingVerifier())
    assert applied == [1]
