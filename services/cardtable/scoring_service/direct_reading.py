"""Reading the log by sequence with JetStream's direct get, for when the consumer delivers nothing.

Every replica of the stream answers a direct get, with no leader of any group needed. On a
cluster that lost a server, the durable consumer's group can be left without a leader (and the
meta group without one to make a new consumer) for as long as the server is away, while the
stream itself goes on under a new leader: reading by sequence keeps the projection up meanwhile.

A direct get goes to any one of the replicas, the lost one too, so each waits briefly and is
asked again when unanswered.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg

from cardtable.scoring_service.messages import (
    StoredMessage,
    nanoseconds_from_rfc3339,
    stored_at_from_nanoseconds,
)

#: Requests in flight at once: a round trip each, so a window of them hides the latency.
WINDOW = 32
#: A live replica answers within milliseconds; an unanswered request went to a lost one, and
#: asking again soon is what keeps a window (which waits for its slowest) short.
REQUEST_TIMEOUT_SECONDS = 0.2
ATTEMPTS = 8
#: What a direct get adds to the stored message's own headers.
_DIRECT_GET_HEADERS = frozenset(
    {
        "Nats-Stream",
        "Nats-Sequence",
        "Nats-Time-Stamp",
        "Nats-Subject",
        "Nats-Last-Sequence",
        "Nats-Num-Pending",
        "Status",
        "Description",
    }
)


class SequenceReader:
    """Reads one stream's messages by sequence, as a client allowed its direct gets."""

    def __init__(self, client: Client, stream: str, prefix: str = "$JS.API") -> None:
        self._client = client
        self._subject = f"{prefix}.DIRECT.GET.{stream}"

    async def read_after(self, position: int, limit: int) -> list[StoredMessage]:
        """Up to ``limit`` messages stored right after ``position``, in order, without a gap.

        Stops at the first sequence not stored yet (or not yet on the replica that answered).
        Only for a stream whose sequences are all ours: in one with other subjects, the next
        sequence may belong to someone else.
        """
        first = await self._get(position + 1) if limit > 0 else None
        if first is None:
            return []  # the usual answer when the consumer is fine: one request, not a window
        messages = [first]
        sequence = position + 2
        while len(messages) < limit:
            window = range(sequence, sequence + min(WINDOW, limit - len(messages)))
            answers = await asyncio.gather(*(self._get(wanted) for wanted in window))
            for answer in answers:
                if answer is None:
                    return messages
                messages.append(answer)
            sequence = window.stop
        return messages

    async def _get(self, sequence: int) -> StoredMessage | None:
        """The message at ``sequence``; ``None`` when not stored; raises when nobody answers."""
        request = json.dumps({"seq": sequence}).encode()
        for attempt in range(ATTEMPTS):
            try:
                reply = await self._client.request(
                    self._subject, request, timeout=REQUEST_TIMEOUT_SECONDS
                )
            except nats.errors.TimeoutError:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            return stored_from_direct_get(reply)
        raise AssertionError("unreachable")


def stored_from_direct_get(reply: Msg) -> StoredMessage | None:
    """A direct get's reply as the writer takes it (its own headers only); ``None`` for a 404."""
    headers = reply.headers or {}
    status = headers.get("Status")
    if status == "404":
        return None
    if status:
        raise nats.errors.Error(f"direct get answered {status} {headers.get('Description', '')}")
    stored_at = headers.get("Nats-Time-Stamp")
    return StoredMessage(
        sequence=int(headers["Nats-Sequence"]),
        subject=headers["Nats-Subject"],
        data=reply.data,
        headers={k: v for k, v in headers.items() if k not in _DIRECT_GET_HEADERS},
        stored_at=(
            stored_at_from_nanoseconds(nanoseconds_from_rfc3339(stored_at))
            if stored_at
            else datetime.now(UTC)
        ),
    )
