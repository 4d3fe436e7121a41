"""One signature for the batches that are ready to append at the same moment.

Under load the rules service answers many tables' moves in one message, so many commands reach
their append in the same turn of the event loop. Each asks this queue for its batch's
signature; at the end of the turn the queue signs them all with one Ed25519 signature over a
Merkle tree (``BatchSigner.sign_many``), and each batch still carries its own proof. A command
alone in its turn gets a plain signature, as before. The wait is one turn of the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from cardtable.platform.log_signing import BatchSigner

#: Told of each turn's signing: the signatures made and the batches they cover.
SignatureListener = Callable[[int, int], None]


class SigningQueue:
    """Collects payloads over one turn of the event loop and signs them together."""

    def __init__(self, signer: BatchSigner) -> None:
        self._signer = signer
        self.listeners: list[SignatureListener] = []
        self._payloads: list[bytes] = []
        self._waiting: list[asyncio.Future[str]] = []

    async def signature(self, payload: bytes) -> str:
        """The ``Cardtable-Signature`` header for ``payload``, ready at the end of this turn."""
        loop = asyncio.get_running_loop()
        if not self._payloads:
            loop.call_soon(self._sign_waiting)
        future: asyncio.Future[str] = loop.create_future()
        self._payloads.append(payload)
        self._waiting.append(future)
        return await future

    def _sign_waiting(self) -> None:
        payloads, waiting = self._payloads, self._waiting
        self._payloads, self._waiting = [], []
        try:
            headers = self._signer.sign_many(payloads)
        except Exception as error:  # a key that cannot sign fails every command waiting on it
            for future in waiting:
                if not future.done():
                    future.set_exception(error)
            return
        for future, header in zip(waiting, headers, strict=True):
            if not future.done():  # a command cancelled meanwhile appends nothing
                future.set_result(header)
        signatures = len({header.split(" ", 3)[2] for header in headers})
        for listener in self.listeners:
            listener(signatures, len(payloads))
