from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.bots.trick_model import FEATURES, model_key
from cardtable_tools.bench import fit_trick_model


def test_the_fit_writes_a_model_for_every_kind_and_trick_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "model.json"
    fit_trick_model.main(["--deals", "60", "--seed", "3", "--out", str(out)])
    model = json.loads(out.read_text())
    assert (model["deals"], model["seed"]) == (60, 3)
    for kind in ("trump", "NT", "MT"):
        for left in range(1, 17):
            key = model_key(kind, left)
            assert len(model["coefficients"][key]) == FEATURES
            quality = model["fit"][key]
            # Least squares with a constant never leaves more spread than it found.
            assert quality["residual_spread"] <= quality["spread"] + 1e-9
    printed = capsys.readouterr()
    assert "trump/16" in printed.out and f"written to {out}" in printed.out


def test_the_same_seed_fits_the_same_model() -> None:
    first = fit_trick_model.fit(fit_trick_model.collect(8, seed=4))
    assert first == fit_trick_model.fit(fit_trick_model.collect(8, seed=4))


def test_no_deals_is_refused() -> None:
    with pytest.raises(SystemExit):
        fit_trick_model.main(["--deals", "0"])
