"""Every setting the deployment files give a cardtable container is one the code reads.

A misspelt variable (``STREAM_REPLICA=3``) is silently ignored by the service, which then runs
on its default; this catches it before an operator has to.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.deploy.tools import REPO, must_pass, tool

#: Read by the image or the Python runtime rather than by cardtable's own settings.
RUNTIME_VARIABLES = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "HOME", "PATH"}


def variables_read_by_code() -> set[str]:
    """Upper-case string literals of the package: the names it reads.

    A secret (``EnvReader.secret("NAME")``) is also read as ``NAME_FILE``, the file holding it.
    """
    names: set[str] = set()
    for source in (REPO / "services/cardtable").rglob("*.py"):
        text = source.read_text()
        names.update(re.findall(r"\"([A-Z][A-Z0-9_]{2,})\"", text))
        names.update(f"{name}_FILE" for name in re.findall(r"\.secret\(\s*\"([A-Z0-9_]+)\"", text))
    return names


def cardtable_containers(objects: list[dict]) -> list[dict]:
    found = []
    for obj in objects:
        if obj.get("kind") not in ("Deployment", "StatefulSet"):
            continue
        spec = obj["spec"]["template"]["spec"]
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            if container["image"].split(":")[0].endswith("cardtable"):
                found.append(container)
    return found


@pytest.mark.parametrize("target", ["overlays/dev", "overlays/prod"])
def test_kubernetes_sets_only_settings_the_code_reads(target: str) -> None:
    objects = [
        doc
        for doc in yaml.safe_load_all(must_pass([tool("kubectl"), "kustomize", f"deploy/{target}"]))
        if doc
    ]
    known = variables_read_by_code() | RUNTIME_VARIABLES
    config = next(
        obj
        for obj in objects
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"].startswith("cardtable-config")
    )
    given = set(config["data"])
    for container in cardtable_containers(objects):
        given.update(env["name"] for env in container.get("env", []))
    assert given - known == set()


def test_compose_sets_only_settings_the_code_reads() -> None:
    output = must_pass(
        [tool("docker-compose"), "--file", "docker-compose.yml", "config", "--format", "json"],
        env={"TOKEN_SIGNING_KEY": "x" * 32},
    )
    services = json.loads(output)["services"]
    known = variables_read_by_code() | RUNTIME_VARIABLES
    for name, service in services.items():
        if service["image"].split(":")[0].endswith("cardtable"):
            assert set(service.get("environment", {})) - known == set(), name
