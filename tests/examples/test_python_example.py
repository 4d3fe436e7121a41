"""examples/python/play_hearts.py: it plays a seat to the end, and its scores check out.

The example runs as a reader runs it, a subprocess after ``source .run/env`` against a
``cardtable run`` of the test's own, and must print that the totals it recomputed from the
facts, the ``GameFinished`` event and the scoring service agree; given a wrong recomputation it
must say they disagree and exit with status 1. The recomputation itself is checked on deals
written by hand (the two examples of docs/rules.md#hearts-scoring, one a moon shot), so a wrong
rule there fails here instead of agreeing with itself.
"""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path
from types import ModuleType

import grpc
import pytest

from cardtable_api.events.v1 import events_pb2, facts_pb2
from cardtable_api.table.v1 import table_pb2
from tests.examples.stack import REPO, run_shell

EXAMPLE = REPO / "examples" / "python" / "play_hearts.py"
#: The cards taken by no one's points: every club, diamond and spade but the queen.
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
BLANKS = [f"{rank}{suit}" for suit in "CDS" for rank in RANKS if f"{rank}{suit}" != "QS"]
HEARTS = [f"{rank}H" for rank in RANKS]


def load_example() -> ModuleType:
    """The example as a module (it is a script, not part of a package)."""
    spec = importlib.util.spec_from_file_location("play_hearts", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def deal(taken: dict[int, list[str]]) -> list[events_pb2.FactRecorded]:
    """One deal's facts: each seat wins tricks of the cards listed for it, four at a time, with
    the other facts a deal also records in between (which the recomputation must ignore)."""
    tricks = [
        (seat, cards[i : i + 4]) for seat, cards in taken.items() for i in range(0, len(cards), 4)
    ]
    assert len(tricks) == 13 and sorted(
        card for cards in taken.values() for card in cards
    ) == sorted(BLANKS + HEARTS + ["QS"])
    facts = [events_pb2.FactRecorded(deal_started=facts_pb2.DealStarted(cards_each=13))]
    for number, (seat, cards) in enumerate(tricks, start=1):
        facts.append(
            events_pb2.FactRecorded(card_played=facts_pb2.CardPlayed(seat=seat, card=cards[0]))
        )
        won = facts_pb2.TrickWon(trick_number=number, seat=seat, cards=cards, points=99)
        facts.append(events_pb2.FactRecorded(trick_won=won))
    facts.append(events_pb2.FactRecorded(deal_scored=facts_pb2.DealScored(totals=[7, 7, 7, 7])))
    return facts


def test_the_totals_follow_the_rules_examples_moon_shot_included() -> None:
    example = load_example()
    # docs/rules.md: A takes QS 2H 3H 4H (16), B 5H to 9H (5), C 10H to AH (5), D no point.
    plain = deal(
        {
            0: ["QS", *HEARTS[:3]],
            1: [*HEARTS[3:8], *BLANKS[:3]],
            2: [*HEARTS[8:], *BLANKS[3:6]],
            3: BLANKS[6:],
        }
    )
    assert example.hearts_totals(plain) == [16, 5, 5, 0]
    # Seat 2 takes every card, so every heart and the queen: 0 for it, 26 for the others.
    moon = deal({2: [*BLANKS, *HEARTS, "QS"]})
    assert example.hearts_totals(moon) == [26, 26, 0, 26]
    assert example.hearts_totals(plain + moon) == [42, 31, 5, 26]


def test_the_verdict_fails_when_any_total_disagrees() -> None:
    example = load_example()
    assert example.verdict([42, 31, 5, 26], [42, 31, 5, 26], [42, 31, 5, 26]) == (
        True,
        "verdict: AGREE: totals from the facts [42, 31, 5, 26], GameFinished [42, 31, 5, 26], "
        "scoring service [42, 31, 5, 26]",
    )
    agree, line = example.verdict([42, 31, 5, 26], [42, 31, 5, 26], [16, 31, 5, 26])
    assert not agree and line.startswith("verdict: DISAGREE: ")
    assert not example.verdict([16, 5, 5, 0], [42, 31, 5, 26], [42, 31, 5, 26])[0]


def run_example(code: str, workdir: Path) -> tuple[int, str]:
    """Exit status and printed output of ``code`` run after ``source .run/env`` in ``workdir``."""
    started = time.monotonic()
    finished = run_shell(code, workdir, timeout=180)
    return finished.returncode, (
        f"exit {finished.returncode} after {time.monotonic() - started:.0f} s\n"
        f"--- stdout\n{finished.stdout}\n--- stderr\n{finished.stderr[-3000:]}"
    )


@pytest.mark.services
@pytest.mark.timeout(400)
@pytest.mark.services
def test_the_example_plays_a_whole_game_and_its_scores_agree(example_stack: Path) -> None:
    status, output = run_example(f"python {EXAMPLE} --seed 1", example_stack)
    assert status == 0, output
    assert re.search(r"game over after \d+ deal\(s\)", output), output
    assert "\nverdict: AGREE: totals from the facts [" in output, output


@pytest.mark.services
@pytest.mark.timeout(400)
@pytest.mark.services
def test_the_example_exits_1_when_the_scores_disagree(example_stack: Path) -> None:
    # The example with a recomputation that is wrong: a Hearts deal's scores never add up to 0.
    wrong = f"""python - <<'EOF'
import asyncio, importlib.util, random, sys
spec = importlib.util.spec_from_file_location("play_hearts", "{EXAMPLE}")
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
example.hearts_totals = lambda facts: [0, 0, 0, 0]
sys.exit(asyncio.run(example.main(True, random.Random(1))))
EOF"""
    status, output = run_example(wrong, example_stack)
    assert status == 1, output
    assert "\nverdict: DISAGREE: totals from the facts [0, 0, 0, 0], GameFinished [" in output


async def test_a_move_refused_by_the_rate_limit_is_sent_again_after_the_wait_it_names() -> None:
    """Fast computer players bring a person's turns quicker than the rate limit allows: the
    example waits as the refusal says and sends the same command (same id) again."""
    example = load_example()
    sent: list[str] = []

    class Tables:
        async def MakeMove(
            self, move: table_pb2.MakeMoveRequest, metadata: object
        ) -> table_pb2.MakeMoveResponse:
            sent.append(move.command_id)
            if len(sent) == 1:
                raise grpc.aio.AioRpcError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    grpc.aio.Metadata(),
                    grpc.aio.Metadata(("retry-after-ms", "30")),
                    "too many requests",
                )
            return table_pb2.MakeMoveResponse(version=7)

    move = table_pb2.MakeMoveRequest(command_id="c1", table_id="t", seat=0, action="play 2C")
    started = time.monotonic()
    reply = await example.send_move(Tables(), move, ())
    assert reply.version == 7
    assert sent == ["c1", "c1"]
    assert time.monotonic() - started >= 0.03
