"""Keep proto/ compatible with the last released contract (make proto-check, make proto-baseline).

``check`` runs ``buf breaking`` on a proto tree against the committed baseline, a buf image of
the protos as last released (``proto/baseline/released.binpb``), with the rule set of the tree's
``buf.yaml``, and says what to do when it fails. ``cut`` replaces the baseline with the protos
as they are now: it is run at a release, never to make ``check`` pass (proto/baseline/README.md).

The baseline is an image, not a copy of the ``.proto`` files: buf compares against it offline,
and a copy under ``proto/`` would be compiled, linted and generated as a second module.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
#: Where the baseline lives, relative to the proto tree it guards.
BASELINE = Path("baseline") / "released.binpb"

ADVICE = """\
The protos break the released contract ({baseline}, rule set in {config}).
Events already in the logs and clients built on the released protos must keep working, so a
released field keeps its number, type, name, JSON name and oneof, and a released message, enum
value or file stays where it is. Instead of changing one, add a new field (a new number) or a new
message and mark the old one [deprecated = true]; a contract that cannot stay compatible is a
new package (cardtable.<area>.v2) next to v1. The baseline is replaced only when a release is
cut (make proto-baseline, see proto/baseline/README.md), never to silence this check."""


def buf() -> str:
    """The buf binary of this environment (the buf-bin package), else one on the PATH."""
    beside = Path(sys.executable).parent / "buf"
    if beside.exists():
        return str(beside)
    found = shutil.which("buf")
    if found is None:
        raise SystemExit("buf is not installed: run `make install`")
    return found


def check(proto_root: Path) -> int:
    """0 when ``proto_root`` is compatible with its baseline; else print why and what to do."""
    baseline = proto_root / BASELINE
    if not baseline.exists():
        print(f"no baseline at {baseline}: cut one with `make proto-baseline`", file=sys.stderr)
        return 1
    result = subprocess.run(
        [buf(), "breaking", "--against", str(BASELINE)],
        cwd=proto_root,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 0:
        print(f"protos are compatible with {BASELINE}")
        return 0
    print(result.stdout + result.stderr, end="", file=sys.stderr)
    advice = ADVICE.format(baseline=f"proto/{BASELINE}", config="proto/buf.yaml")
    print(advice, file=sys.stderr)
    return 1


def cut(proto_root: Path) -> int:
    """Write the baseline: an image of ``proto_root`` as it is now.

    Without source info (comments and line numbers), so the file changes only when the
    contract's shape does, and the same protos always give the same bytes.
    """
    (proto_root / BASELINE).parent.mkdir(exist_ok=True)
    subprocess.run(
        [buf(), "build", "--exclude-source-info", "--output", str(BASELINE)],
        cwd=proto_root,
        check=True,
    )
    print(f"wrote proto/{BASELINE}: commit it with the release")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["check", "cut"])
    parser.add_argument(
        "--proto-root", type=Path, default=PROTO_ROOT, help="the proto tree (default: proto/)"
    )
    arguments = parser.parse_args()
    if arguments.action == "check":
        return check(arguments.proto_root)
    return cut(arguments.proto_root)


if __name__ == "__main__":
    sys.exit(main())
