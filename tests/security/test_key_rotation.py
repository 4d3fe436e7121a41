"""Rotating the log signing key and the deal sealing key: old logs still open and verify, and
new batches use the new keys (docs/security.md, "Rotating each key")."""

from __future__ import annotations

import random

from cardtable.eventlog.audit import audit_log
from cardtable.eventlog.reader import LogReader
from cardtable.platform.deal_sealing import SealingKeys
from cardtable.platform.log_signing import SIGNATURE_HEADER, BatchSigner, BatchVerifier
from cardtable.table_service.log_security import LogSecurity
from cardtable_tools.servers.provisioning import NatsNamespace
from tests.table_service import harness
from tests.table_service.harness import NO_TIMERS, play_to_the_end, running_table_service


def _rotated(old: LogSecurity) -> LogSecurity:
    """New signing and sealing keys, with the old ones kept for what they signed and sealed."""
    return LogSecurity(
        BatchSigner.generate(),
        SealingKeys.from_text(SealingKeys.generate().current_text(), [old.sealing.current_text()]),
        retired_public_keys=(old.signer.public_key,),
    )


async def test_rotated_keys_open_and_verify_old_batches_and_sign_new_ones(
    nats_url: str, nats_namespace: NatsNamespace, rules_address: str
) -> None:
    prefix = nats_namespace.prefix
    old = harness.log_security(prefix)
    async with running_table_service(nats_url, prefix, rules_address) as cluster:
        players = {seat: cluster.player(f"p{seat}") for seat in range(3)}
        table_id = await players[0].create("whist", 3, {}, NO_TIMERS)
        for seat, player in players.items():
            await player.join(table_id, seat)
        before = await cluster.subject_sequence(table_id)

    new = _rotated(old)
    harness._LOG_SECURITY[prefix] = new
    async with running_table_service(nats_url, prefix, rules_address) as cluster:
        players = {seat: cluster.player(f"p{seat}") for seat in range(3)}
        # the deal sealed under the old key opens: each seat sees its card
        view = await players[2].view(table_id, 2)
        assert len(view.seat_view.hand) == 1
        await play_to_the_end(table_id, players, random.Random(7))
        batches = await LogReader(cluster.nats, cluster.parts.app.store).table(table_id)

    signers = [stored.headers[SIGNATURE_HEADER].split()[1] for stored in batches]
    old_part = [stored for stored in batches if stored.sequence <= before]
    assert set(signers[: len(old_part)]) == {old.signer.key_id}
    assert set(signers[len(old_part) :]) == {new.signer.key_id}
    sealing_ids = [
        event.deal_committed.sealing_key_id
        for stored in batches
        for event in stored.batch.events
        if event.HasField("deal_committed")
    ]
    assert sealing_ids[0] == old.sealing.current_id
    assert len(sealing_ids) > 1 and set(sealing_ids[1:]) == {new.sealing.current_id}

    both = BatchVerifier([old.signer.public_key, new.signer.public_key])
    report = audit_log(table_id, batches, verifier=both)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.over and report.deals == len(sealing_ids)
    assert sorted(report.notes) == sorted(
        [
            f"{len(old_part)} batches signed by key {old.signer.key_id}",
            f"{len(batches) - len(old_part)} batches signed by key {new.signer.key_id}",
        ]
    )
    # without the retired public key, the batches it signed are not taken for genuine
    only_new = audit_log(table_id, batches, verifier=BatchVerifier([new.signer.public_key]))
    assert not only_new.ok
    assert "signed by unknown key" in str(only_new.problems[0])
