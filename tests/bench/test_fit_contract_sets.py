from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.bots.contract_sets import contract_set_values
from cardtable_tools.bench import fit_contract_sets


def test_the_fit_writes_a_value_for_every_kind_of_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sets.json"
    fit_contract_sets.main(["--deals", "20", "--seed", "3", "--out", str(out)])
    data = json.loads(out.read_text())
    assert (data["deals"], data["seed"]) == (20, 3)
    assert set(data["values"]) == set(contract_set_values())
    assert data["values"]["T0"] == 0.0
    printed = capsys.readouterr()
    assert "T4 NT MT" in printed.out and f"written to {out}" in printed.out


def test_a_smaller_measurement_agrees_with_the_table_within_its_noise() -> None:
    measured = fit_contract_sets.measure(400, seed=5)
    table = contract_set_values()
    for key in ("T1", "T0 NT", "T0 MT", "T1 MT"):
        assert measured[key] == pytest.approx(table[key], abs=0.5), key


def test_no_deals_is_refused() -> None:
    with pytest.raises(SystemExit):
        fit_contract_sets.main(["--deals", "0"])
