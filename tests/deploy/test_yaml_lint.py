"""yamllint over every YAML file of the repository (.yamllint.yaml says how strictly)."""

from __future__ import annotations

from tests.deploy.tools import REPO, must_pass, tool


def test_yaml_is_lint_free() -> None:
    # --strict: warnings fail too. The configuration's ignore list keeps caches and .venv out.
    must_pass([tool("yamllint"), "--strict", "--config-file", str(REPO / ".yamllint.yaml"), "."])


def test_yamllint_sees_the_deployment_files() -> None:
    """Guard against an ignore pattern that silently skips what it should check."""
    listed = must_pass([tool("yamllint"), "--list-files", "."]).split()
    for expected in (
        "docker-compose.yml",
        "deploy/base/kustomization.yaml",
        "deploy/overlays/prod/kustomization.yaml",
        "deploy/components/postgres/postgres.yaml",
    ):
        assert f"./{expected}" in listed or expected in listed, expected
