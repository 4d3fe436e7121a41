"""A table read afresh from its log costs one signature verification, not one a batch.

Each batch names its predecessor's SHA-256 in its signed bytes, so the last batch's verified
signature vouches for every batch before it (``log_signing.vouched_batches``). A replica that
restarts reads many tables at once; each of them used to cost a verification per batch.
"""

from __future__ import annotations

import asyncio
import random

import grpc

from cardtable.client.table_pipeline import PipelinedTableStub
from cardtable.platform.log_signing import SIGNATURE_HEADER, BatchVerifier, ChainCheck
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service.harness import (
    Player,
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


async def _move_every_table_at_once(
    tables: list[tuple[str, dict[int, Player]]], rng: random.Random
) -> None:
    """One move on each table, the moves sent together (as many players would)."""
    chosen = []
    for table_id, players in tables:
        summary = await players[0].view(table_id, None)
        seat = summary.game_status.to_act[0]
        view = await players[seat].view(table_id, seat)
        chosen.append((players[seat], table_id, seat, pick_action(view.seat_view, rng)))
    await asyncio.gather(*(player.move(t, seat, action) for player, t, seat, action in chosen))


async def test_moves_of_many_tables_at_once_share_signatures_and_every_batch_checks_alone(
    nats_url: str, nats_namespace: NatsNamespace
) -> None:
    """Commands that reach their append together are signed with one tree signature; the log
    still verifies batch by batch with the public key alone, and a table read afresh folds the
    same state."""
    async with (
        running_rules() as rules_address,
        running_table_service(nats_url, nats_namespace.prefix, rules_address) as cluster,
    ):
        seated = [await seated_quick_hearts(cluster, f"t{index}-") for index in range(6)]
        # Every player's calls over one Pipeline stream, as a game front end makes them: moves
        # sent together reach the table service, and the rules service, together.
        channel = grpc.aio.insecure_channel(cluster.table_address)
        cluster.channels.append(channel)
        stub = PipelinedTableStub(channel)
        tables = [
            (
                table_id,
                {
                    seat: Player(stub, player.token, player.player_id)  # type: ignore[arg-type]
                    for seat, player in players.items()
                },
            )
            for table_id, players in seated
        ]
        told: list[tuple[int, int]] = []
        app = cluster.parts.app
        app.security.signing.listeners.append(lambda s, b: told.append((s, b)))
        rng = random.Random(5)
        for _ in range(8):
            await _move_every_table_at_once(tables, rng)

        signatures = sum(made for made, _ in told)
        signed = sum(batches for _, batches in told)
        assert signed >= 8 * len(tables)
        assert signatures < signed  # some turns signed several tables' batches at once

        verifier = BatchVerifier([app.security.signer.public_key])
        trees = 0
        for table_id, _players in tables:
            before = app._cache[table_id].state
            chain = ChainCheck(verifier)
            async for stored in app.store.read(table_id):
                header = stored.headers[SIGNATURE_HEADER]
                trees += header.startswith("ed25519-tree ")
                assert chain.check(stored.payload, stored.headers, stored.sequence, stored.batch)
            assert chain.version == before.version
            app._forget(table_id)
            table = await app.load(table_id)
            assert table.broken is None
            assert table.state.last_batch_sha256 == before.last_batch_sha256
        assert trees > 0
        assert verifier.verifications < chain.version * len(tables)
