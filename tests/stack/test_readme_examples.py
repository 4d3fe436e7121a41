"""Every shell example in README.md runs as printed, so the README cannot drift from the code.

A newcomer's first hour went on examples that no longer worked (a token signed with a key the
stack never showed, grpcurl that nothing installed). Each fenced ``sh``/``bash``/``console``
block is run with bash, ``set -euo pipefail``, in a clean environment, one block after another
in one working directory (a block may use a file an earlier one wrote), as a reader would in a
second terminal:

* by default after ``source .run/env``, against the ``cardtable run`` of tests/stack/conftest.py
  (in a directory of its own, with its demonstration, so ``DEMO_TABLE_ID`` names a finished
  game; test_run_demo.py reads what that printed);
* ``<!-- readme-test: own servers ... -->`` on the line before a block: without ``.run/env``,
  with only ``.venv/bin`` on PATH (the benchmarks start servers of their own);
* ``<!-- readme-test: skip ... -->``: not run here (``make run`` and ``make test`` themselves;
  the TypeScript client's block, which ``tests/examples/test_typescript_client.py`` runs from
  the checkout); the marker says why, and there are few.

The README's ``buf curl`` lines (the gRPC command line ``make install`` installs with ``buf``) run
with the rest, which checks them by exit status: a test below shows that a refused call exits
non-zero, and that a reply is the one ``cardtable call`` prints.

Long commands run at the small sizes of :data:`SMALL`: the README's text, replaced by the same
command with smaller arguments. Each entry must match the README exactly once, so an example
that changes its arguments fails here until its small form is updated too.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.examples.stack import BIN, run_shell

pytestmark = [pytest.mark.services, pytest.mark.timeout(400)]

README = Path(__file__).resolve().parents[2] / "README.md"
STACK, OWN_SERVERS, SKIP = "stack", "own servers", "skip"
MARKER = re.compile(r"<!-- readme-test: (skip|own servers)\b[^>]*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
SHELLS = {"sh", "bash", "console"}
#: README text -> the same command at a size a test can afford (a minute or so in all).
SMALL = {
    "--games 1000 --seed 7": "--games 20 --seed 7",
    "--games 200 --option must_trump=true": "--games 10 --option must_trump=true",
    "bench-engine --seconds 5": "bench-engine --seconds 0.5",
    "--games 400 --seed 1": "--games 4 --seed 1 --budget-ms 2",
    "--games 60 --budget-ms 5 --workers 2": "--games 3 --budget-ms 1 --workers 2",
    "bench --tables 40,80,160 --seconds 20": (
        "bench --tables 2 --seconds 1 --raw-seconds 0.5 --no-paced --no-floor --out bench-a"
    ),
    "bench --table-path --tables 80,160": (
        "bench --table-path --tables 2 --seconds 1 --raw-seconds 0.5 --no-paced --no-floor "
        "--out bench-b"
    ),
    "bench --faults": (
        "bench --faults --rounds 1 --fault-tables 2 --pause-seconds 1 --out bench-c"
    ),
    "fuzz --requests 10000": "fuzz --requests 50",
    "bench-scoring --games 10000": "bench-scoring --games 50 --lag-seconds 0",
    "bench-floor --tables 40": "bench-floor --tables 2 --seconds 1 --rates 100 --work-us 0",
}


@dataclass(frozen=True)
class Example:
    """One fenced shell block of the README."""

    line: int  # of the opening fence, for the failure message
    code: str
    mode: str


def readme_examples(text: str) -> list[Example]:
    """The README's shell blocks in order, each with how it is to be run."""
    examples: list[Example] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(j for j in range(index + 1, len(lines)) if lines[j].startswith("```"))
        if opening.group(1) in SHELLS:
            marker = MARKER.match(lines[index - 1]) if index else None
            body = lines[index + 1 : end]
            if opening.group(1) == "console":  # commands only, not the output shown
                body = [line[2:] for line in body if line.startswith("$ ")]
            mode = marker.group(1) if marker else STACK
            examples.append(Example(index + 1, "\n".join(body) + "\n", mode))
        index = end + 1
    return examples


def made_small(examples: list[Example]) -> list[Example]:
    """The examples with :data:`SMALL` applied, each entry matching exactly once."""
    runnable = [example for example in examples if example.mode != SKIP]
    for long in SMALL:
        found = sum(example.code.count(long) for example in runnable)
        assert found == 1, f"SMALL's {long!r} matches {found} README examples, not one"
    small = []
    for example in runnable:
        code = example.code
        for long, short in SMALL.items():
            code = code.replace(long, short)
        small.append(Example(example.line, code, example.mode))
    return small


def run_example(example: Example, workdir: Path) -> None:
    """Run one block with bash in a clean environment; fail with what it printed."""
    path = f"{BIN}:/usr/local/bin:/usr/bin:/bin" if example.mode == OWN_SERVERS else "/usr/bin:/bin"
    started = time.monotonic()
    finished = run_shell(
        example.code, workdir, source_env=example.mode == STACK, path=path, timeout=180
    )
    assert finished.returncode == 0, (
        f"README.md line {example.line} failed with {finished.returncode} "
        f"after {time.monotonic() - started:.0f} s:\n{example.code}\n"
        f"--- stdout\n{finished.stdout[-3000:]}\n--- stderr\n{finished.stderr[-3000:]}"
    )


def test_the_readme_marks_few_blocks_and_every_small_size_matches() -> None:
    examples = readme_examples(README.read_text(encoding="utf-8"))
    assert sum(example.mode == SKIP for example in examples) <= 4
    assert any(example.mode == OWN_SERVERS for example in examples)
    made_small(examples)


def own_server_commands() -> list[Example]:
    """Each command line of the README's own-servers blocks, at its small size, on its own.

    Those lines start servers of their own and use no file another wrote, so they run as
    separate tests that the two test workers share.
    """
    commands = []
    for example in made_small(readme_examples(README.read_text(encoding="utf-8"))):
        if example.mode != OWN_SERVERS:
            continue
        for offset, line in enumerate(example.code.splitlines(), start=1):
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(Example(example.line + offset, line + "\n", OWN_SERVERS))
    return commands


def _command_name(example: Example) -> str:
    subcommand, first_option = example.code.split()[1:3]
    return f"{subcommand}{first_option[1:]}" if subcommand == "bench" else subcommand


@pytest.mark.parametrize("example", own_server_commands(), ids=_command_name)
def test_the_benchmark_examples_work_on_servers_of_their_own(
    example: Example, tmp_path: Path
) -> None:
    run_example(example, tmp_path)


@pytest.mark.alone  # the first of its group (tests/conftest.py): its setup plays the demonstration,
# whose duration test_run_demo.py holds to the README's claim
def test_the_commands_cardtable_run_prints_run_as_printed(demo_stack: Path) -> None:
    printed = (demo_stack / "run-output.txt").read_text().splitlines()
    commands = [line.strip() for line in printed if line.startswith(("  source ", "  cardtable "))]
    assert commands.count("source .run/env") == 2  # once the services are up, once after the demo
    assert any(command.startswith("cardtable audit ") for command in commands)
    run_example(Example(0, "\n".join(commands) + "\n", "printed"), demo_stack)


def test_the_readme_examples_work_after_source_run_env(demo_stack: Path) -> None:
    for example in made_small(readme_examples(README.read_text(encoding="utf-8"))):
        if example.mode == STACK:
            run_example(example, demo_stack)


BUF_CURL = "buf curl --protocol grpc --http2-prior-knowledge"


def test_the_readme_calls_each_service_it_calls_with_cardtable_call_with_buf_curl_too() -> None:
    examples = readme_examples(README.read_text(encoding="utf-8"))
    called = {"$RULES_ADDRESS", "$TABLE_ADDRESS"}
    with_buf = [example for example in examples if BUF_CURL in example.code]

    assert with_buf and all(example.mode == STACK for example in with_buf)
    for address in called:
        assert any(f'"{address}"' in example.code for example in examples)
        assert any(f'"http://{address}' in example.code for example in with_buf), address


def test_buf_curl_answers_as_cardtable_call_does_and_fails_on_a_refused_call(
    demo_stack: Path,
) -> None:
    method = "cardtable.rules.v1.RulesService/ListGames"
    by_buf = run_shell(f'{BUF_CURL} "http://$RULES_ADDRESS/{method}"\n', demo_stack)
    by_call = run_shell(f'cardtable call "$RULES_ADDRESS" {method}\n', demo_stack)
    refused = run_shell(
        f'{BUF_CURL} -d \'{{"game": "nope"}}\' '
        '"http://$RULES_ADDRESS/cardtable.rules.v1.RulesService/NewGame"\n',
        demo_stack,
    )

    assert by_buf.returncode == 0, by_buf.stderr
    assert json.loads(by_buf.stdout) == json.loads(by_call.stdout)
    assert refused.returncode != 0
    assert json.loads(refused.stderr)["code"] == "invalid_argument"
