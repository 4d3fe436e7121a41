"""Auditing records: clean ones pass, and each kind of tampering is named where it happens."""

from __future__ import annotations

from typing import Any

import pytest

from cardtable.engine.shuffle import commitment
from cardtable.replay.audit import (
    FAILED,
    FORMAT,
    NOT_RUN,
    PARTIAL,
    PASSED,
    RESULTS,
    RULES,
    SHUFFLE,
    AuditProblem,
    audit_record,
)
from tests.replay.conftest import GAMES, game_record, record_game, to_version_0


def first_problem(record: Any) -> AuditProblem:
    report = audit_record(record)
    assert not report.ok
    first = report.first
    assert first is not None
    return first


def test_clean_records_pass_with_every_shuffle_proven(game_name: str) -> None:
    record = game_record(game_name)
    report = audit_record(record)
    assert report.ok, report.first
    assert report.checks == dict.fromkeys((FORMAT, SHUFFLE, RULES, RESULTS), PASSED)
    assert report.shuffle_proofs == report.deals == len(record["deals"])
    assert report.deals_without_proof == 0
    assert report.actions == sum(len(deal["actions"]) for deal in record["deals"])
    assert report.tricks == sum(len(deal["tricks"]) for deal in record["deals"])
    assert list(report.totals) == record["result"]["totals"]
    assert report.to_json()["first_problem"] is None


def test_a_record_without_proofs_passes_unless_proofs_are_required() -> None:
    game, players, options, seed = GAMES["hearts"]
    record = record_game(game, players, options, seed, proofs=False)
    report = audit_record(record)
    assert report.ok
    assert report.shuffle_proofs == 0 and report.deals_without_proof == len(record["deals"])
    required = audit_record(record, require_shuffle_proofs=True)
    assert required.checks[SHUFFLE] == FAILED
    assert str(required.first) == "deal 1, the deal: the deal has no shuffle proof"


def test_version_0_record_audits_clean() -> None:
    report = audit_record(to_version_0(game_record("whist")))
    assert report.ok and report.version == 0


# -- the four tamperings of the issue -----------------------------------------------------
def test_a_card_changed_in_a_trick() -> None:
    record = game_record("hearts")
    trick = record["deals"][1]["tricks"][4]
    original = list(trick["cards"])
    trick["cards"][2] = "AH" if original[2] != "AH" else "KH"
    problem = first_problem(record)
    assert problem.check == RESULTS
    assert problem.deal == 2
    assert str(problem).startswith("deal 2: trick 5 records cards")


def test_a_card_changed_in_an_action() -> None:
    record = game_record("hearts")
    actions = record["deals"][0]["actions"]
    # The first card played, the two of clubs, becomes a card its seat does not hold.
    index = next(i for i, entry in enumerate(actions) if entry["action"] == "play 2C")
    actions[index]["action"] = "play 3C"
    problem = first_problem(record)
    assert problem.check == RULES
    assert problem.deal == 1
    assert problem.action is not None and problem.action.startswith(f"action {index + 1} (")
    assert "3C" in problem.reason


def test_a_card_changed_in_the_deck_breaks_its_shuffle_proof() -> None:
    record = game_record("belote")
    deck = record["deals"][2]["deck"]
    deck[0], deck[5] = deck[5], deck[0]
    problem = first_problem(record)
    assert (problem.check, problem.deal, problem.action) == (SHUFFLE, 3, "the deal")
    assert problem.reason == "the deck order is not the one the revealed seed produces"


def test_a_score_changed() -> None:
    record = game_record("358")
    record["deals"][4]["scores"][0] += 1
    problem = first_problem(record)
    assert (problem.check, problem.deal, problem.action) == (RESULTS, 5, None)
    assert "the recorded scores" in problem.reason and "differ from the engine's" in problem.reason


def test_a_final_total_changed() -> None:
    record = game_record("whist")
    record["result"]["totals"][1] += 10
    problem = first_problem(record)
    assert problem.where == "the final result"
    assert "recorded totals" in problem.reason


def test_a_seed_that_does_not_match_its_commitment() -> None:
    record = game_record("whist")
    record["deals"][3]["shuffle"]["seed"] = "ab" * 32
    problem = first_problem(record)
    assert str(problem) == (
        "deal 4, the deal: the revealed seed does not match the published commitment"
    )


def test_a_commitment_that_fits_a_different_seed() -> None:
    # Seed and commitment agree, but they are not the seed this deck came from.
    record = game_record("whist")
    other = bytes(range(32))
    record["deals"][3]["shuffle"] = {"commitment": commitment(other), "seed": other.hex()}
    problem = first_problem(record)
    assert (problem.check, problem.deal) == (SHUFFLE, 4)
    assert problem.reason == "the deck order is not the one the revealed seed produces"


def test_a_missing_action() -> None:
    record = game_record("whist")
    del record["deals"][10]["actions"][3]
    problem = first_problem(record)
    assert (problem.check, problem.deal) == (RULES, 11)
    assert problem.action is not None and problem.action.startswith("action 4 (")
    assert "an action is missing or out of order before this one" in problem.reason


def test_the_last_action_missing() -> None:
    record = game_record("hearts")
    record["deals"][-1]["actions"].pop()
    problem = first_problem(record)
    assert problem.check == RESULTS
    assert "tricks" in problem.reason


# -- results verify_record does not compare -----------------------------------------------
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda deal: deal["tricks"][2].update(leader=9), "trick 3 is recorded as led by seat 9"),
        (lambda deal: deal.update(dealer=9), "the deal records seat 9 as dealer"),
        (lambda deal: deal.update(number=99), "the deal is recorded as number 99"),
        (lambda deal: deal["totals"].__setitem__(0, -1), "the recorded running totals [-1,"),
        (lambda deal: deal.update(tricks=[]), "the record has no tricks, but 8 were played"),
        (lambda deal: deal.update(scores=None), "the record has no scores"),
        (lambda deal: deal.pop("totals"), "the record has no running totals"),
    ],
)
def test_other_recorded_results_are_checked(change: Any, expected: str) -> None:
    record = game_record("belote")
    change(record["deals"][1])
    problem = first_problem(record)
    assert problem.check == RESULTS
    assert expected in problem.reason


def test_a_thrown_in_deal_may_have_no_scores() -> None:
    record = game_record("belote")
    thrown_in = record["deals"][0]
    assert thrown_in["tricks"] == []
    thrown_in["scores"] = None
    assert audit_record(record).ok


# -- ordering and unreadable records ------------------------------------------------------
def test_the_first_problem_is_the_earliest_in_the_game() -> None:
    record = game_record("358")
    record["deals"][6]["shuffle"]["seed"] = "00" * 32  # deal 7
    record["deals"][2]["scores"][1] -= 1  # deal 3, after its last action
    record["deals"][2]["shuffle"]["seed"] = "11" * 32  # deal 3, before its first action
    report = audit_record(record)
    assert [(p.check, p.deal) for p in sorted(report.problems, key=lambda p: p.position)] == [
        (SHUFFLE, 3),
        (RESULTS, 3),
        (SHUFFLE, 7),
    ]
    first = report.first
    assert first is not None and (first.check, first.deal) == (SHUFFLE, 3)


def test_a_proof_missing_from_one_deal_only() -> None:
    record = game_record("hearts")
    del record["deals"][2]["shuffle"]
    problem = first_problem(record)
    assert str(problem) == "deal 3, the deal: the deal has no shuffle proof"


def test_a_malformed_proof() -> None:
    record = game_record("hearts")
    record["deals"][0]["shuffle"] = {"commitment": "x", "seed": "not hex"}
    problem = first_problem(record)
    assert problem.check == SHUFFLE
    assert problem.reason == "the shuffle proof is malformed: a shuffle seed is written as hex"


def test_an_unreadable_action_text() -> None:
    record = game_record("hearts")
    record["deals"][0]["actions"][7]["action"] = "play ZZ"
    report = audit_record(record)
    assert report.checks[FORMAT] == FAILED and report.checks[RULES] == NOT_RUN
    first = report.first
    assert first is not None
    assert first.where == "deal 1, action 8 (seat {seat}: play ZZ)".format(
        seat=record["deals"][0]["actions"][7]["seat"]
    )


def test_results_are_partial_after_a_refused_action() -> None:
    record = game_record("hearts")
    del record["deals"][0]["actions"][20]
    report = audit_record(record)
    assert report.checks[RULES] == FAILED and report.checks[RESULTS] == PARTIAL


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"format": "something else"},
        {"format": "cardtable-game-record", "version": 7},
        {"format": "cardtable-game-record", "version": 1, "game": "poker"},
    ],
)
def test_unreadable_records_get_a_verdict_not_an_exception(data: Any) -> None:
    report = audit_record(data)
    first = report.first
    assert first is not None and first.check == FORMAT
    assert str(first).startswith("the record cannot be read: ")


def test_results_of_the_wrong_shape_get_a_verdict_not_an_exception() -> None:
    record = game_record("hearts")
    record["deals"][0]["tricks"][0]["cards"] = 5
    report = audit_record(record)
    first = report.first
    assert first is not None and first.check == FORMAT
    assert "malformed" in first.reason


def test_bad_options_are_a_format_problem() -> None:
    record = game_record("hearts")
    record["options"] = {"quick": "perhaps"}
    first = first_problem(record)
    assert first.check == FORMAT


def test_an_exporter_can_add_its_own_problems() -> None:
    report = audit_record(game_record("hearts"))
    report.add(
        AuditProblem("log", "event 17 is missing", deal=2, action="the deal", position=(1, -1))
    )
    assert not report.ok and report.checks["log"] == FAILED
    assert report.to_json()["first_problem"] == {
        "check": "log",
        "deal": 2,
        "action": "the deal",
        "reason": "event 17 is missing",
    }


# -- a game the table ended early (Whist: everyone else left) -------------------------------
def _ended_early_after(deals: int) -> dict[str, Any]:
    """A Whist record cut after ``deals`` deals, ended there because everyone else left."""
    record = game_record("whist")
    record["deals"] = record["deals"][:deals]
    totals = record["deals"][-1]["totals"]
    record["result"] = {
        "over": True,
        "totals": totals,
        "places": [2, 1] + [2] * (record["players"] - 2),
        "ended_early": "everyone_else_left",
    }
    return record


def test_a_game_ended_because_everyone_else_left_passes() -> None:
    assert audit_record(_ended_early_after(5)).ok


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda result: result.update(ended_early="x"), "ended early ('x')"),
        (lambda result: result.update(places=[1, 1, 2, 2]), "are not those of a game ended"),
        (lambda result: result.update(over=False), "but not that it is over"),
    ],
)
def test_an_early_end_of_the_wrong_shape_fails(change: Any, expected: str) -> None:
    record = _ended_early_after(5)
    change(record["result"])
    problem = first_problem(record)
    assert problem.check == RESULTS and expected in problem.reason


def test_a_finished_game_cannot_claim_an_early_end_to_change_its_places() -> None:
    record = game_record("whist")
    record["result"]["ended_early"] = "everyone_else_left"
    record["result"]["places"] = [2, 1] + [2] * (record["players"] - 2)
    problem = first_problem(record)
    assert "the engine played it to its end" in problem.reason
    hearts = game_record("hearts")  # a game with no such rule
    hearts["result"]["ended_early"] = "everyone_else_left"
    assert "has no rule for" in first_problem(hearts).reason
