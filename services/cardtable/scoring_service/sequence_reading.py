"""Reading the log by sequence from the stream's leader, for when the consumer delivers nothing.

On a cluster that lost a server, the durable consumer's group can be left without a leader (and
the meta group without one to make a new consumer) for as long as the server is away, while the
stream goes on under a new leader. The stream's leader is what every move needs to be stored at
all, and it answers a message get by sequence: reading that way keeps the projection up.

Not a direct get: any replica answers one, the lost server among them (never), and a follower
still applying the newest messages, which answers "not found" as though the stream ended there.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import nats.errors
from nats.aio.client import Client

from cardtable.scoring_service.messages import (
    StoredMessage,
    nanoseconds_from_rfc3339,
    stored_at_from_nanoseconds,
)

#: Requests in flight at once: a round trip each, so a window of them hides the latency.
WINDOW = 32
#: A leader answers within milliseconds; none answers while the stream elects one.
REQUEST_TIMEOUT_SECONDS = 1.0
NOT_FOUND = 404


class SequenceReader:
    """Reads one stream's messages by sequence, as a client allowed its message gets."""

    def __init__(self, client: Client, stream: str, prefix: str = "$JS.API") -> None:
        self._client = client
        self._subject = f"{prefix}.STREAM.MSG.GET.{stream}"

    async def read_after(self, position: int, limit: int) -> list[StoredMessage]:
        """Up to ``limit`` messages stored right after ``position``, in order, without a gap.

        Stops at the first sequence not stored yet. Only for a stream whose sequences are all
        ours: in one with other subjects, the next sequence may belong to someone else.
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
        """The message at ``sequence``, or ``None`` when the stream holds none there."""
        reply = await self._client.request(
            self._subject, json.dumps({"seq": sequence}).encode(), timeout=REQUEST_TIMEOUT_SECONDS
        )
        answer = json.loads(reply.data)
        error = answer.get("error")
        if error:
            if error.get("code") == NOT_FOUND:
                return None
            raise nats.errors.Error(f"message get answered {error}")
        return stored_from_message_get(answer["message"])


def stored_from_message_get(message: dict[str, Any]) -> StoredMessage:
    """A message get's answer as the writer takes it, as a delivery of the same message."""
    return StoredMessage(
        sequence=int(message["seq"]),
        subject=message["subject"],
        data=base64.b64decode(message.get("data", "")),
        headers=parse_headers(base64.b64decode(message.get("hdrs", ""))),
        stored_at=stored_at_from_nanoseconds(nanoseconds_from_rfc3339(message["time"])),
    )


def parse_headers(raw: bytes) -> dict[str, str]:
    """``NATS/1.0\\r\\nName: value\\r\\n...\\r\\n\\r\\n`` as a dict (the last value of a name).

    >>> parse_headers(b"NATS/1.0\\r\\nCardtable-Schema: 1\\r\\nNats-Msg-Id: a:b\\r\\n\\r\\n")
    {'Cardtable-Schema': '1', 'Nats-Msg-Id': 'a:b'}
    >>> parse_headers(b"")
    {}
    """
    headers: dict[str, str] = {}
    for line in raw.decode().split("\r\n")[1:]:
        name, separator, value = line.partition(":")
        if separator:
            headers[name.strip()] = value.strip()
    return headers
