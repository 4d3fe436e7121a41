"""docs/rules.md against the engine: every worked example's figures, and every link to it.

The rulebook's examples are markdown tables under each game's sections; each test here reads
one table, computes the same figures with the engine and compares them, so the document cannot
say one thing while the engine does another. Links into the rulebook (from the engine's
docstrings, the other docs and the README) must name a heading that exists, and no link in the
docs leaves the repository.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from cardtable.engine.actions import choose_contract, give
from cardtable.engine.cards import (
    CLUBS,
    DIAMONDS,
    FULL_DECK,
    SUIT_OF,
    card_texts,
    format_card,
    parse_card,
    parse_cards,
)
from cardtable.engine.games.belote.rules import (
    CAPOT_BONUS,
    SOLO_CAPOT_BONUS,
    _game_won,
    team_scores,
)
from cardtable.engine.games.hearts.rules import HEARTS, HeartsState
from cardtable.engine.games.three_five_eight.rules import (
    THREE_FIVE_EIGHT,
    CardsExchanged,
    ThreeFiveEightState,
)
from cardtable.engine.games.whist.rules import deal_score, deal_sizes, whist_deck
from cardtable.engine.ranking import places_from_totals
from cardtable.engine.rating import rating_changes, whist_everyone_left_changes
from tests.engine.test_hearts import _score_deal
from tests.engine.test_three_five_eight import EXCHANGE_A, deck_order, resume_after_deal_one
from tests.engine.test_whist import new_game, play_rigged_deal, seat_score

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "docs" / "rules.md"
GAME_MODULES = {
    "games/whist/rules.py": "whist",
    "games/three_five_eight/rules.py": "3-5-8",
    "games/belote/rules.py": "belote",
    "games/hearts/rules.py": "hearts",
}

Table = list[dict[str, str]]


# -- reading the document ------------------------------------------------------------------
def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def sections() -> dict[str, str]:
    """Each heading's anchor and the text under it, up to the next heading."""
    found: dict[str, str] = {}
    anchor = ""
    for line in RULES.read_text().splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            anchor = slug(heading.group(1))
            assert anchor not in found, f"two headings make the anchor #{anchor}"
            found[anchor] = ""
        elif anchor:
            found[anchor] += line + "\n"
    return found


def table(anchor: str, *columns: str) -> Table:
    """The rows of the table under ``anchor`` whose header is ``columns``."""
    lines = sections()[anchor].splitlines()
    for index, line in enumerate(lines):
        if line.startswith("|") and cells(line) == list(columns):
            rows = []
            for row in lines[index + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(columns, cells(row), strict=True)))
            assert rows, f"the table under #{anchor} is empty"
            return rows
    raise AssertionError(f"no table {columns} under #{anchor}")


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def number(cell: str) -> float:
    return float(cell.replace("−", "-"))


def numbers(cell: str) -> list[float]:
    return [number(part) for part in cell.split(",")]


# -- links ---------------------------------------------------------------------------------
def rules_links(text: str) -> list[str]:
    return re.findall(r"rules\.md#([\w-]+)", text)


def test_every_link_into_the_rulebook_names_a_heading() -> None:
    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    sources += sorted((REPO / "services" / "cardtable" / "engine").rglob("*.py"))
    linked = {
        str(path.relative_to(REPO)): rules_links(path.read_text())
        for path in sources
        if path != RULES
    }
    linked["docs/rules.md"] = re.findall(r"\]\(#([\w-]+)\)", RULES.read_text())
    for source, anchors in linked.items():
        for anchor in anchors:
            assert anchor in sections(), f"{source} links to rules.md#{anchor}: no such heading"
    assert linked["README.md"] and linked["docs/record-format.md"]


@pytest.mark.parametrize(("module", "game"), sorted(GAME_MODULES.items()))
def test_each_game_module_points_to_its_rules(module: str, game: str) -> None:
    source = (REPO / "services" / "cardtable" / "engine" / module).read_text()
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert f"docs/rules.md#{game}" in docstring
    assert all(anchor in sections() for anchor in rules_links(docstring))


def test_no_link_in_the_docs_leaves_the_repository() -> None:
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", path.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            resolved = (path.parent / target).resolve()
            assert resolved.is_relative_to(REPO), f"{path.name} links outside: {target}"
            assert resolved.exists(), f"{path.name} links to a missing file: {target}"


def test_nothing_points_outside_the_repository() -> None:
    """The rules, the style and the yardstick live in the repository: a clone has nothing else."""
    outside = re.compile(r"\.\./shared|shared/(RULES|STYLE|bench|seeds)")
    tops = ["README.md", "Makefile", "pyproject.toml", "docs", "services", "tests", "scripts"]
    for top in tops:
        path = REPO / top
        for file in [path] if path.is_file() else sorted(path.rglob("*")):
            if not file.is_file() or file.suffix not in {"", ".md", ".py", ".toml", ".sql"}:
                continue
            for number_, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
                where = f"{file.relative_to(REPO)}:{number_}"
                assert not outside.search(line), f"{where} points outside: {line.strip()}"


# -- common rules --------------------------------------------------------------------------
def test_disconnected_player_example() -> None:
    rows = table("ratings", "player", "total", "place formula", "left at", "change")
    totals = [int(number(row["total"])) for row in rows]
    left_at = {seat: number(row["left at"]) for seat, row in enumerate(rows) if row["left at"]}
    ratings = [1500.0] * len(rows)
    assert rating_changes("whist", totals, ratings) == pytest.approx(
        [number(row["place formula"]) for row in rows]
    )
    assert rating_changes("whist", totals, ratings, left_at) == pytest.approx(
        [number(row["change"]) for row in rows]
    )


def test_adjustment_by_rating_level_example() -> None:
    rows = table("adjustment-by-rating-level", "player", "total", "rating before", "change")
    changes = rating_changes(
        "hearts",
        [int(number(row["total"])) for row in rows],
        [number(row["rating before"]) for row in rows],
    )
    assert changes == pytest.approx([number(row["change"]) for row in rows], abs=0.005)


# -- Whist ---------------------------------------------------------------------------------
def test_whist_decks() -> None:
    for row in table("whist-deal", "players", "ranks in each suit", "cards"):
        deck = whist_deck(int(row["players"]))
        assert len(deck) == int(row["cards"])
        assert format_card(min(deck))[:-1] == row["ranks in each suit"].split()[-1]


def test_whist_sequence_of_deals() -> None:
    for row in table("whist-deal", "players", "cards each, deal by deal", "deals"):
        sizes = deal_sizes(int(row["players"]))
        assert sizes == tuple(int(size) for size in row["cards each, deal by deal"].split())
        assert len(sizes) == int(row["deals"]) == 3 * int(row["players"]) + 12


def test_whist_deal_scores() -> None:
    for row in table("whist-scoring", "bid", "tricks taken", "score"):
        assert deal_score(int(row["bid"]), int(row["tricks taken"])) == number(row["score"])


def test_whist_streak_example_played_out() -> None:
    rows = table("whist-scoring", "deal", "cards each", "bid", "tricks taken", "score")
    state = new_game(4, first_dealer=0)
    scores = []
    for row in rows:
        facts = play_rigged_deal(state, 0, int(row["bid"]), int(row["tricks taken"]))
        assert state.deal_number == int(row["deal"])
        assert state.cards_each == int(row["cards each"])
        scores.append(seat_score(facts, 0))
    assert scores == [number(row["score"]) for row in rows]
    sum_text = re.search(r"scores ([\d +]+) = (\d+)", sections()["whist-scoring"])
    assert sum_text is not None
    terms = [int(term) for term in sum_text.group(1).split("+")]
    counted = [score for row, score in zip(rows, scores, strict=True) if row["cards each"] != "1"]
    assert sum(terms) == sum(counted) == int(sum_text.group(2))


def test_whist_rating_examples() -> None:
    for row in table("whist-rating", "final totals", "changes"):
        totals = [int(total) for total in numbers(row["final totals"])]
        changes = rating_changes("whist", totals, [1500.0] * len(totals))
        assert changes == pytest.approx(numbers(row["changes"]))


def test_whist_everyone_else_left_example() -> None:
    rows = table("whist-rating", "player", "at the end", "change")
    remaining = next(seat for seat, row in enumerate(rows) if row["at the end"] == "playing")
    leavers = [seat for seat, row in enumerate(rows) if row["at the end"] == "left"]
    assert whist_everyone_left_changes(len(rows), remaining, leavers) == [
        number(row["change"]) for row in rows
    ]


# -- 3-5-8 ---------------------------------------------------------------------------------
def test_358_exchange_example() -> None:
    """As in the engine's tests: A is seat 2 (+2), B seat 0 (0), C seat 1 (-2) in deal 2."""
    rows = table("3-5-8-card-exchange", "C's hearts before", "A gives", "C gives back")
    for row in rows:
        hearts = parse_cards(row["C's hearts before"])
        a_hand = parse_cards(EXCHANGE_A)
        # C's other cards: diamonds and clubs A does not hold, so the hearts are as written.
        others = [
            card for card in FULL_DECK if card not in a_hand and SUIT_OF[card] in (CLUBS, DIAMONDS)
        ]
        c_hand = hearts + others[: 16 - len(hearts)]
        state = resume_after_deal_one((0, -2, 2))
        state.deal(deck_order(1, {2: EXCHANGE_A, 1: " ".join(card_texts(c_hand))}))
        state.apply(2, choose_contract("S"))
        facts = state.apply(2, give(parse_card(row["A gives"])))
        exchanged = facts[0]
        assert isinstance(exchanged, CardsExchanged)
        assert (exchanged.seat, exchanged.to_seat) == (2, 1)
        assert format_card(exchanged.returned_card) == row["C gives back"]


def test_358_deal_scores() -> None:
    columns = ("declarer", "third", "dealer")
    rows = table(
        "3-5-8-scoring",
        "contract",
        *(f"{seat} tricks" for seat in columns),
        *columns,
    )
    for row in rows:
        state = THREE_FIVE_EIGHT.new_game(3, {}, first_dealer=0)
        assert isinstance(state, ThreeFiveEightState)
        state.deal(FULL_DECK)
        state.apply(state.declarer, choose_contract(row["contract"]))
        seats = (state.declarer, state.third, state.dealer)
        for seat, name in zip(seats, columns, strict=True):
            state.tricks_won[seat] = int(row[f"{name} tricks"])
        assert sum(state.tricks_won) == 16
        scores = state.deal_score()
        assert [scores[seat] for seat in seats] == [number(row[name]) for name in columns]


def test_358_rating_examples() -> None:
    for row in table("3-5-8-rating", "final totals", "changes"):
        totals = [int(total) for total in numbers(row["final totals"])]
        changes = rating_changes("358", totals, [1500.0] * 3)
        assert changes == pytest.approx(numbers(row["changes"]))


# -- Belote --------------------------------------------------------------------------------
def test_belote_deal_scores() -> None:
    rows = table(
        "belote-scoring",
        "takers' card points",
        "takers' belote",
        "defenders' card points",
        "defenders' belote",
        "capot",
        "takers score",
        "defenders score",
    )
    capots = {
        "none": (0, 0),
        "takers": (CAPOT_BONUS, 0),
        "one taker": (SOLO_CAPOT_BONUS, 0),
        "defenders": (0, CAPOT_BONUS),
    }
    for row in rows:
        # The takers are team 0 here.
        scores, _ = team_scores(
            0,
            (int(row["takers' card points"]), int(row["defenders' card points"])),
            (int(row["takers' belote"]), int(row["defenders' belote"])),
            capots[row["capot"]],
        )
        assert scores == (int(row["takers score"]), int(row["defenders score"]))


def test_belote_end_examples() -> None:
    outcomes = {
        "the first team wins": 0,
        "the second team wins": 1,
        "the game goes on": None,
        "another deal is played": None,
    }
    for row in table("belote-end-of-the-game", "team totals after a deal", "result"):
        first, second = (int(total) for total in numbers(row["team totals after a deal"]))
        seat_totals = (first, second, first, second)
        winner = outcomes[row["result"]]
        assert _game_won(seat_totals) == (winner is not None)
        if winner is not None:
            assert places_from_totals(seat_totals)[winner] == 1


def test_belote_rating_examples() -> None:
    for row in table(
        "belote-rating", "ratings before (winners, losers)", "each winner", "each loser"
    ):
        levels = [
            float(level) for level in re.findall(r"\d+", row["ratings before (winners, losers)"])
        ]
        winners, losers = levels if len(levels) == 2 else levels * 2
        changes = rating_changes("belote", [510, 320, 510, 320], [winners, losers, winners, losers])
        won, lost = number(row["each winner"]), number(row["each loser"])
        assert changes == pytest.approx([won, lost, won, lost], abs=0.005)


# -- Hearts --------------------------------------------------------------------------------
def test_hearts_deal_scores() -> None:
    text = sections()["hearts-scoring"]
    assert text.count("| player | cards taken | score |") == 2
    blocks = text.split("| player | cards taken | score |")[1:]
    for block in blocks:
        rows = [cells(line) for line in block.splitlines()[2:] if line.startswith("|")]
        taken = {seat: row[1] for seat, row in enumerate(rows)}
        assert _score_deal(taken) == tuple(int(row[2]) for row in rows)


def test_hearts_final_places_and_rating() -> None:
    rows = table("hearts-rating", "player", "total", "place", "change")
    totals = [int(row["total"]) for row in rows]
    assert places_from_totals(totals, lower_is_better=True) == tuple(
        int(row["place"]) for row in rows
    )
    assert rating_changes("hearts", totals, [1500.0] * 4) == pytest.approx(
        [number(row["change"]) for row in rows]
    )


def test_hearts_classic_game_ends_once_someone_reaches_100() -> None:
    """The end example: the scoring example's deal takes the totals to 102, 64, 64, 89."""
    rows = table("hearts-rating", "player", "total", "place", "change")
    final = [int(row["total"]) for row in rows]
    for before, over in ((final, True), ([total - 3 for total in final], False)):
        state = HEARTS.new_game(4, {}, first_dealer=3)
        assert isinstance(state, HeartsState)
        state.deal(FULL_DECK)
        deal = [16, 5, 5, 0]
        state.deal_scores = [
            tuple(total - score for total, score in zip(before, deal, strict=True))
        ]
        state.totals = list(state.deal_scores[0])
        state._phase = "play"  # scoring is tested through the trick points directly
        state.points = deal
        state._score_deal()
        assert state.totals == before and state.is_over() is over
        if over:
            assert state.places() == tuple(int(row["place"]) for row in rows)
