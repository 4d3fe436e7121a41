"""``cardtable call``: grpcurl's everyday uses against the real rules service, by reflection."""

from __future__ import annotations

import asyncio
import json

import pytest

from cardtable.cli.main import main
from tests.table_service.conftest import rules_address

__all__ = ["rules_address"]
RULES = "cardtable.rules.v1.RulesService"


async def _call(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    # the command blocks on its own channel; the in-process server answers on this loop
    code = await asyncio.to_thread(main, ["call", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_list_then_call_with_a_json_request(
    rules_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = await _call([rules_address, "list"], capsys)
    assert code == 0 and RULES in out.split()
    code, out, _ = await _call([rules_address, "list", RULES], capsys)
    assert code == 0 and f"{RULES}.NewGame" in out.split()
    request = '{"game": "hearts", "players": 4}'
    code, out, _ = await _call(["-d", request, rules_address, f"{RULES}/NewGame"], capsys)
    assert code == 0
    assert json.loads(out)["state"]["game"] == "hearts"


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        ([f"{RULES}/Nope"], 2, "has no method 'Nope'; it has ApplyAction"),
        (["cardtable.rules.v1.Nope/ListGames"], 2, "the server has no service"),
        (["-d", '{"nope": 1}', f"{RULES}/NewGame"], 2, "the request is not a"),
        (["-H", "no colon", f"{RULES}/ListGames"], 2, "-H takes 'NAME: VALUE'"),
        (["-d", '{"game": "chess", "players": 4}', f"{RULES}/NewGame"], 1, "Code: "),
    ],
)
async def test_what_cannot_be_called_is_said(
    rules_address: str,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    says: str,
) -> None:
    exit_code, out, err = await _call([*argv[:-1], rules_address, argv[-1]], capsys)
    assert (exit_code, out) == (code, "")
    assert says in err
