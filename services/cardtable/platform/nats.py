"""A NATS connection with its JetStream context, set up to ride out server restarts.

The client reconnects forever: a table service that gave up on the event store after a few tries
would need a restart to recover, while one that keeps trying heals itself when NATS returns.
Publishes made while disconnected fail with a timeout instead of blocking, and the health of the
service reflects that through its handlers. On shutdown ``close`` drains: buffered publishes are
flushed and subscriptions finish the message in hand before the socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import nats
from nats.aio.client import Client
from nats.errors import ConnectionClosedError, ConnectionDrainingError
from nats.js import JetStreamContext

from cardtable.platform.logging import BoundLogger, get_logger
from cardtable.platform.settings import NatsCredentials, NatsSettings


@dataclass
class NatsConnection:
    """A connected client and the JetStream context built on it."""

    client: Client
    jetstream: JetStreamContext
    _closed: bool = field(default=False, init=False)

    async def close(self) -> None:
        """Drain and close; calling it twice is harmless."""
        if self._closed or self.client.is_closed:
            self._closed = True
            return
        self._closed = True
        with contextlib.suppress(ConnectionClosedError, ConnectionDrainingError):
            await self.client.drain()

    async def __aenter__(self) -> NatsConnection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


async def connect_nats(
    url: str,
    *,
    name: str,
    credentials: NatsCredentials | None = None,
    inbox_prefix: str | None = None,
    connect_timeout_seconds: float = 30.0,
    reconnect_wait_seconds: int = 1,
    jetstream_timeout_seconds: float = 2.0,
    ping_interval_seconds: int = 2,
    logger: BoundLogger | None = None,
) -> NatsConnection:
    """Connect to ``url`` (a comma-separated list also works), retrying until the deadline.

    ``name`` shows up in the server's connection list (``nats server report connections``),
    which is how an operator tells which service holds a connection. ``credentials`` name the
    user (platform/nats_access.py) and, for TLS, the certificate authority to trust;
    ``inbox_prefix`` is the user's own reply inbox, the only one its permissions let it read.

    A JetStream request unanswered after ``jetstream_timeout_seconds`` went to a leader that is
    gone (they answer in milliseconds); the caller's retry then finds the one elected next.
    A server that hangs (paused, or cut off by the network) keeps its TCP connection open and
    only an unanswered ping shows it: ``ping_interval_seconds`` times two unanswered pings is
    how long the client stays on it before moving to another server of the cluster. The
    library's default, two minutes, would hold a client on a stalled node for that long.
    """
    log = (logger or get_logger(__name__)).bind(nats_client=name)
    last_error: list[BaseException] = []

    connected: list[Client] = []

    async def on_error(error: Exception) -> None:
        # Before the first connection every retry fails the same way, and the deadline's
        # TimeoutError names the cause: one line that it is retrying, not one per attempt
        # (a command-line tool printed ten bare "nats error" lines before its message).
        if connected:
            log.warning("nats error", extra={"error": repr(error)})
        elif not last_error:
            log.info(
                "nats not reachable yet, retrying",
                extra={"error": repr(error), "for_seconds": connect_timeout_seconds},
            )
        last_error[:] = [error]

    async def on_disconnected() -> None:
        if connected and connected[0].is_closed:  # our own close(): nothing went wrong
            log.debug("nats connection closed")
        else:
            log.warning("nats disconnected")

    async def on_reconnected() -> None:
        log.info("nats reconnected")

    options: dict[str, Any] = {}
    if credentials is not None:
        options.update(credentials.connect_options())
    if inbox_prefix:
        options["inbox_prefix"] = inbox_prefix
    connecting = nats.connect(
        servers=[server.strip() for server in url.split(",")],
        name=name,
        **options,
        allow_reconnect=True,
        max_reconnect_attempts=-1,  # also makes the first connect keep trying; bounded below
        reconnect_time_wait=reconnect_wait_seconds,
        connect_timeout=2,
        ping_interval=ping_interval_seconds,
        max_outstanding_pings=2,
        error_cb=on_error,
        disconnected_cb=on_disconnected,
        reconnected_cb=on_reconnected,
    )
    try:
        client = await asyncio.wait_for(connecting, connect_timeout_seconds)
    except TimeoutError as timeout:
        cause = last_error[0] if last_error else timeout
        raise TimeoutError(
            f"NATS at {url} still unreachable after {connect_timeout_seconds:g}s: {cause!r}"
        ) from cause
    connected.append(client)
    return NatsConnection(
        client=client, jetstream=client.jetstream(timeout=jetstream_timeout_seconds)
    )


async def connect_nats_from_settings(
    settings: NatsSettings,
    *,
    name: str,
    inbox_prefix: str | None = None,
    logger: BoundLogger | None = None,
) -> NatsConnection:
    """``connect_nats`` with the URL and credentials read from the environment."""
    return await connect_nats(
        settings.url,
        name=name,
        credentials=settings.credentials,
        inbox_prefix=inbox_prefix,
        logger=logger,
    )
