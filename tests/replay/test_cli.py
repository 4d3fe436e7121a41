"""``cardtable record --with-shuffle-proofs``, ``cardtable replay`` and ``cardtable audit``."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cardtable.cli.main import main
from cardtable.engine.cards import FULL_DECK, parse_cards
from cardtable.engine.shuffle import check_shuffle
from cardtable.eventlog import reader
from cardtable.platform.settings import LogReadingSettings
from cardtable.replay.audit import audit_record
from cardtable.replay.render import render_audit
from tests.replay.conftest import game_record, to_version_0


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def write(tmp_path: Path, record: Any, name: str = "game.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(record))
    return str(path)


@pytest.fixture
def hearts_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out = run(
        capsys, "record", "--game", "hearts", "--seed", "3", "--option", "quick=true",
        "--with-shuffle-proofs",
    )  # fmt: skip
    assert code == 0
    path = tmp_path / "hearts.json"
    path.write_text(out)
    return str(path)


# -- record -------------------------------------------------------------------------------
def test_record_with_shuffle_proofs_writes_a_proof_per_deal(
    hearts_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(Path(hearts_file).read_text())
    assert record["generated_by"].endswith("--with-shuffle-proofs")
    for deal in record["deals"]:
        proof = deal["shuffle"]
        assert set(proof) == {"commitment", "seed"}
        order = parse_cards(deal["deck"])
        assert check_shuffle(proof["seed"], proof["commitment"], FULL_DECK, order) is None
    code, again = run(
        capsys, "record", "--game", "hearts", "--seed", "3", "--option", "quick=true",
        "--with-shuffle-proofs",
    )  # fmt: skip
    assert code == 0
    assert json.loads(again) == record  # the same seed makes the same proofs


def test_record_without_the_flag_has_no_proofs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "record", "--game", "belote", "--seed", "2")
    assert code == 0
    assert all("shuffle" not in deal for deal in json.loads(out)["deals"])


# -- audit --------------------------------------------------------------------------------
def test_audit_passes_a_clean_record(hearts_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "audit", "--file", hearts_file)
    assert code == 0
    assert "✓ shuffle  1 of 1 deal" in out
    assert "PASSED" in out


def test_audit_fails_a_tampered_record_naming_the_first_mismatch(
    hearts_file: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(Path(hearts_file).read_text())
    record["deals"][0]["shuffle"]["seed"] = "00" * 32
    record["deals"][0]["scores"][0] += 1
    code, out = run(capsys, "audit", "--file", write(tmp_path, record))
    assert code == 1
    assert "✗ shuffle" in out and "✗ results" in out
    assert "FAILED: deal 1, the deal: the revealed seed does not match the published" in out


def test_audit_json_report(
    hearts_file: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(Path(hearts_file).read_text())
    del record["deals"][0]["actions"][30]
    code, out = run(capsys, "audit", "--file", write(tmp_path, record), "--json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    assert report["checks"]["rules"] == "failed"
    assert report["first_problem"]["deal"] == 1
    assert report["first_problem"]["action"].startswith("action 31 (")


def test_audit_requires_proofs_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, plain = run(capsys, "record", "--game", "hearts", "--seed", "4", "--option", "quick=true")
    path = write(tmp_path, json.loads(plain))
    code, out = run(capsys, "audit", "--file", path)
    assert code == 0 and "no shuffle proofs in this record" in out
    code, out = run(capsys, "audit", "--file", path, "--require-shuffle-proofs")
    assert code == 1 and "the deal has no shuffle proof" in out


def test_audit_of_files_that_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "audit", "--file", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in out
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert run(capsys, "audit", "--file", str(broken))[0] == 2
    code, out = run(capsys, "audit", "--file", write(tmp_path, {"format": "nope"}))
    assert code == 1 and "FAILED: the record cannot be read" in out


def test_a_log_audit_puts_its_heading_before_every_check() -> None:
    report = audit_record(game_record("hearts"))
    log_checks = [("signatures", True, "12 batches signed by key k1"), ("log", True, "12 batches")]
    lines = [str(line) for line in render_audit(report, "the log of table t1", log_checks)]
    assert lines[0] == "audit of the log of table t1"
    checks = [line.split()[1] for line in lines if line.startswith("  ") and line[2] in "✓✗–~"]
    assert checks == ["signatures", "log", "format", "shuffle", "rules", "results"]
    assert "  ✓ log        12 batches" in lines


def test_audit_of_a_table_the_log_does_not_hold(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class EmptyLog:
        async def table(self, table_id: str) -> list[Any]:
            return []

        async def signed_from(self) -> int:
            return 1

    @contextlib.asynccontextmanager
    async def empty_log(settings: LogReadingSettings) -> AsyncIterator[EmptyLog]:
        assert settings.url == "nats://127.0.0.1:9" and settings.prefix == "cardtable"
        yield EmptyLog()

    async def no_keys(env: Any) -> None:
        return None

    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:9")
    monkeypatch.delenv("EVENT_PREFIX", raising=False)
    monkeypatch.setattr(reader, "log_reader", empty_log)
    monkeypatch.setattr(reader, "verifying_keys", no_keys)
    code, out = run(capsys, "audit", "NOSUCHTABLE")
    assert code == 1
    assert out == "no table NOSUCHTABLE in the event log\n"


# -- replay -------------------------------------------------------------------------------
def test_replay_prints_the_whole_game_by_default_as_a_spectator(
    hearts_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "replay", "--file", hearts_file)
    assert code == 0
    assert "spectator view" in out and "Deal 1" in out and "Game over" in out
    assert "is dealt" not in out
    assert "♣" in out


def test_replay_from_a_seat_and_open(hearts_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "replay", "--file", hearts_file, "--seat", "2")
    assert code == 0
    assert "seat 2's point of view" in out and "you are dealt" in out and "you pass left" in out
    code, out = run(capsys, "replay", "--file", hearts_file, "--open")
    assert code == 0
    assert all(f"seat {seat} is dealt" in out for seat in range(4))


def test_replay_seat_and_open_exclude_each_other(
    hearts_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--file", hearts_file, "--seat", "1", "--open"])


def test_replay_step_without_a_terminal_prints_everything(
    hearts_file: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out = run(capsys, "replay", "--file", hearts_file, "--step", "--seat", "0")
    assert code == 0
    assert "Game over" in out and "next trick" not in out


def test_replay_one_deal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, game_record("whist"))
    code, out = run(capsys, "replay", "--file", path, "--deal", "9", "--open")
    assert code == 0
    assert "Deal 9 of 24" in out and "Deal 8 " not in out and "Deal 10" not in out
    assert "seat 0 is dealt" in out


def test_replay_shows_every_hand_only_of_a_finished_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = game_record("whist")
    record["deals"] = record["deals"][:3]
    record["result"] = {"over": False}
    path = write(tmp_path, record)
    code, out = run(capsys, "replay", "--file", path, "--open")
    assert code == 2 and "only for a finished game" in out
    code, out = run(capsys, "replay", "--file", path, "--seat", "1")
    assert code == 0 and "Deal 3" in out


def test_replay_refuses_a_seat_or_deal_that_does_not_exist(
    hearts_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "replay", "--file", hearts_file, "--seat", "4")
    assert code == 2 and "there is no seat 4" in out
    code, out = run(capsys, "replay", "--file", hearts_file, "--deal", "2")
    assert code == 2 and "there is no deal 2" in out


def test_replay_of_a_version_0_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, to_version_0(game_record("358")))
    code, out = run(capsys, "replay", "--file", path, "--seat", "1", "--deal", "2")
    assert code == 0
    assert "chooses" in out and "you are dealt" in out


def test_replay_stops_where_a_record_breaks_the_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = game_record("hearts")
    del record["deals"][1]["actions"][12]
    code, out = run(capsys, "replay", "--file", write(tmp_path, record))
    assert code == 1
    assert "Deal 2" in out
    assert "the record stops following the rules at deal 2, action 13 (" in out


def test_replay_of_files_that_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "replay", "--file", str(tmp_path / "missing.json"))[0] == 2
    code, out = run(capsys, "replay", "--file", write(tmp_path, {"format": "nope"}))
    assert code == 2 and "not a game record" in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe not utf-8", "cannot read"),
        (b"[" * 100_000, "cannot read"),  # nested past the parser's stack
        (b"1" * 5000, "cannot read"),  # an integer past Python's limit
    ],
)
def test_files_that_cannot_be_read_get_a_sentence_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    for command in ("verify", "audit", "replay"):
        code, out = run(
            capsys, command, *([str(path)] if command == "verify" else ["--file", str(path)])
        )
        assert code == 2 and expected in out, command


def test_replay_of_json_that_is_not_an_object_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "replay", "--file", write(tmp_path, []))
    assert code == 2 and "a game record is a JSON object" in out


def test_a_record_whose_tricks_are_not_a_list_gets_a_verdict(
    hearts_file: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(Path(hearts_file).read_text())
    record["deals"][0]["tricks"] = 5
    path = write(tmp_path, record)
    code, out = run(capsys, "audit", "--file", path)
    assert code == 1 and "tricks must be a list" in out
    code, out = run(capsys, "verify", path)
    assert code == 2 and "tricks must be a list" in out
