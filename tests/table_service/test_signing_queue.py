"""Batches ready in the same turn of the event loop share one signature (signing_queue)."""

from __future__ import annotations

import asyncio

from cardtable.platform.log_signing import BatchSigner, BatchVerifier
from cardtable.table_service.signing_queue import SigningQueue

SIGNER = BatchSigner.generate()


def _signature_of(header: str) -> str:
    return header.split(" ")[2]


async def test_batches_ready_together_share_one_signature_each_checkable_alone() -> None:
    queue = SigningQueue(SIGNER)
    told: list[tuple[int, int]] = []
    queue.listeners.append(lambda signatures, batches: told.append((signatures, batches)))
    payloads = [f"batch {index}".encode() for index in range(5)]

    headers = await asyncio.gather(*(queue.signature(payload) for payload in payloads))

    assert len({_signature_of(header) for header in headers}) == 1
    assert told == [(1, 5)]
    for payload, header in zip(payloads, headers, strict=True):
        assert BatchVerifier([SIGNER.public_key]).verify(payload, header) == SIGNER.key_id


async def test_a_batch_alone_in_its_turn_gets_a_plain_signature() -> None:
    queue = SigningQueue(SIGNER)
    first = await queue.signature(b"first")
    second = await queue.signature(b"second")
    assert first == SIGNER.sign(b"first")
    assert second == SIGNER.sign(b"second")


async def test_a_cancelled_command_leaves_the_others_signed() -> None:
    queue = SigningQueue(SIGNER)
    waiting = [asyncio.ensure_future(queue.signature(f"b{i}".encode())) for i in range(3)]
    await asyncio.sleep(0)  # each has asked
    waiting[1].cancel()
    done = await asyncio.gather(*waiting, return_exceptions=True)
    assert isinstance(done[1], asyncio.CancelledError)
    verifier = BatchVerifier([SIGNER.public_key])
    assert verifier.verify(b"b0", str(done[0])) == SIGNER.key_id
    assert verifier.verify(b"b2", str(done[2])) == SIGNER.key_id


async def test_a_key_that_cannot_sign_fails_every_command_waiting() -> None:
    class Broken(BatchSigner):
        def sign_many(self, payloads: object) -> list[str]:
            raise RuntimeError("no key")

    queue = SigningQueue(Broken(SIGNER._private))
    done = await asyncio.gather(
        queue.signature(b"a"), queue.signature(b"b"), return_exceptions=True
    )
    assert all(isinstance(result, RuntimeError) for result in done)
