"""A table read afresh from its log costs one signature verification, not one a batch.

Each batch names its predecessor's SHA-256 in its signed bytes, so the last batch's verified
signature vouches for every batch before it (``log_signing.vouched_batches``). A replica that
restarts reads many tables at once; each of them used to cost a verification per batch.
"""

from __future__ import annotations

import random

from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import (
    pick_action,
    running_rules,
    running_table_service,
    seated_quick_hearts,
)


async def test_a_table_read_afresh_verifies_one_signature_and_folds_the_same_state(
    nats_url: str, nats_namespace: NatsNamespace
) -> None:
    async with (
        running_rules() as rules_address,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster,
    ):
        table_id, players = await seated_quick_hearts(cluster, "v")
        rng = random.Random(12)
        for _ in range(12):
            summary = await players[0].view(table_id, None)
            seat = summary.game_status.to_act[0]
            view = await players[seat].view(table_id, seat)
            await players[seat].move(table_id, seat, pick_action(view.seat_view, rng))

        app = cluster.parts.app
        before = app._cache[table_id].state
        verifier = app.security.verifier
        checked: list[bytes] = []
        verify = verifier.verify

        def counted(payload: bytes, header: str) -> str:
            checked.append(payload)
            return verify(payload, header)

        verifier.verify = counted  # type: ignore[method-assign]
        app._forget(table_id)  # as after a restart: the next read folds the whole log
        table = await app.load(table_id)

        assert table.broken is None
        assert table.state.version == before.version > 12
        assert table.state.inputs == before.inputs
        assert table.state.last_batch_sha256 == before.last_batch_sha256
        assert len(checked) == 1  # the last batch's, for all of them
        view = await players[0].view(table_id, 0)
        assert view.version == before.version
