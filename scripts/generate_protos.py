"""Generate the Python contracts from proto/ into services/cardtable_api/ (one command: make proto).

Why the extra step after protoc: the proto packages are ``cardtable.<area>.v1``, so protoc's
Python output imports ``cardtable.common.v1``, which collides with the hand-written ``cardtable``
package. The generated tree is therefore placed under its own top-level package,
``cardtable_api``, and its imports of our own contracts are rewritten to that package name
(protoletariat does this job but pins protobuf below 6, which mypy-protobuf 5 cannot use).

``--check`` regenerates into a temporary folder and fails when the committed code differs, so
stale contracts cannot land.
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
TARGET = ROOT / "services" / "cardtable_api"
#: ``from cardtable.common.v1 import ...`` in generated code, to point at cardtable_api.
OWN_IMPORT = re.compile(r"^(\s*(?:from|import) )cardtable\.", re.MULTILINE)
HEADER = '"""Generated from proto/ by scripts/generate_protos.py. Do not edit."""\n'


def generate(destination: Path) -> None:
    """Write the generated package to ``destination`` (replaced if present)."""
    protos = sorted(str(path.relative_to(PROTO_ROOT)) for path in PROTO_ROOT.rglob("*.proto"))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        bin_dir = Path(sys.executable).parent
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"--proto_path={PROTO_ROOT}",
                f"--python_out={out}",
                f"--grpc_python_out={out}",
                f"--plugin=protoc-gen-mypy={bin_dir / 'protoc-gen-mypy'}",
                f"--plugin=protoc-gen-mypy_grpc={bin_dir / 'protoc-gen-mypy_grpc'}",
                f"--mypy_out={out}",
                f"--mypy_grpc_out={out}",
                *protos,
            ],
            check=True,
            cwd=PROTO_ROOT,
        )
        generated = out / "cardtable"
        for folder in [generated, *(path for path in generated.rglob("*") if path.is_dir())]:
            (folder / "__init__.py").write_text(HEADER)
        for module in generated.rglob("*.py*"):
            module.write_text(OWN_IMPORT.sub(r"\1cardtable_api.", module.read_text()))
        if destination.exists():
            shutil.rmtree(destination)
        shutil.copytree(generated, destination)


def differences(left: Path, right: Path) -> list[str]:
    """Relative paths that differ between two trees (missing on either side included)."""
    comparison = filecmp.dircmp(left, right, ignore=["__pycache__"])
    found = [*comparison.left_only, *comparison.right_only, *comparison.diff_files]
    for name, sub in comparison.subdirs.items():
        found.extend(f"{name}/{item}" for item in differences(Path(sub.left), Path(sub.right)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the code is out of date")
    arguments = parser.parse_args()
    if not arguments.check:
        generate(TARGET)
        print(f"generated {TARGET.relative_to(ROOT)}")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / "cardtable_api"
        generate(fresh)
        stale = differences(fresh, TARGET) if TARGET.exists() else ["(missing)"]
    if stale:
        print("generated code is out of date; run `make proto`:", *stale, sep="\n  ")
        return 1
    print("generated code is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
