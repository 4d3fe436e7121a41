"""Typed settings read from environment variables, checked once at start-up.

A service that starts with a missing or malformed setting would otherwise fail later, on the first
request that needs it, far from the cause. So every service builds its settings before it opens a
port: ``EnvReader`` reads each variable, collects every problem, and ``load`` raises one
``SettingsError`` naming all the offending variables at once, so an operator fixes them in one go.

Each group of settings is a frozen dataclass with a ``read(EnvReader)`` classmethod, and a
service composes the groups it needs into its own dataclass::

    >>> @dataclass(frozen=True)
    ... class TableSettings:
    ...     server: ServerSettings
    ...     nats: NatsSettings
    ...
    ...     @classmethod
    ...     def read(cls, env: EnvReader) -> "TableSettings":
    ...         return cls(server=ServerSettings.read(env), nats=NatsSettings.read(env))
    >>> load({"NATS_URL": "nats://127.0.0.1:4222"}, TableSettings.read).server.grpc_port
    50051
    >>> load({"GRPC_PORT": "http"}, TableSettings.read)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    cardtable.platform.settings.SettingsError: invalid configuration:
      GRPC_PORT='http' is not a port number (0-65535)
      NATS_URL is required but not set (e.g. nats://127.0.0.1:4222)
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

Settings = TypeVar("Settings")

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
EXAMPLE_NATS = "nats://127.0.0.1:4222"
EXAMPLE_PG = "postgresql://postgres@127.0.0.1:5432/postgres"


class SettingsError(ValueError):
    """The environment does not describe a runnable service; the message names each variable."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("invalid configuration:\n" + "\n".join(f"  {p}" for p in problems))


def _redact(url: str) -> str:
    """Hide a password so that an error message about a URL can safely reach the logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


class EnvReader:
    """Reads variables from one environment mapping and collects every problem it finds.

    Each accessor returns a usable placeholder when the variable is bad, so that reading can go
    on and report all problems together; ``load`` makes sure such a placeholder never escapes.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self.problems: list[str] = []

    def _raw(self, name: str, default: str | None, example: str) -> str | None:
        """Return the stripped value, the default, or record that a required one is missing."""
        value = self._env.get(name, "").strip()
        if value:
            return value
        if default is None:
            self.problems.append(f"{name} is required but not set (e.g. {example})")
        return default

    def problem(self, message: str) -> None:
        """Record a problem that spans several variables, such as inconsistent bounds."""
        self.problems.append(message)

    def string(self, name: str, *, default: str | None = None, example: str = "...") -> str:
        """A free-form string, required when no default is given."""
        return self._raw(name, default, example) or ""

    def integer(self, name: str, *, default: int, minimum: int, maximum: int) -> int:
        """An integer within inclusive bounds, so nonsense such as a zero-sized pool is refused."""
        raw = self._raw(name, str(default), str(default))
        try:
            value = int(raw or "")
        except ValueError:
            self.problems.append(f"{name}={raw!r} is not an integer")
            return default
        if not minimum <= value <= maximum:
            self.problems.append(f"{name}={value} is outside {minimum}..{maximum}")
            return default
        return value

    def port(self, name: str, *, default: int) -> int:
        """A TCP port; 0 is allowed and means "any free port" (useful in tests)."""
        raw = self._raw(name, str(default), str(default))
        if raw is None or not raw.isdigit() or int(raw) > 65535:
            self.problems.append(f"{name}={raw!r} is not a port number (0-65535)")
            return default
        return int(raw)

    def seconds(self, name: str, *, default: float) -> float:
        """A non-negative duration in seconds, fractions allowed."""
        raw = self._raw(name, str(default), str(default))
        try:
            value = float(raw or "")
        except ValueError:
            value = -1.0
        if not value >= 0:  # also rejects NaN
            self.problems.append(f"{name}={raw!r} is not a non-negative number of seconds")
            return default
        return value

    def secret(self, name: str, *, required: bool = False, example: str = "...") -> str:
        """A secret from ``NAME``, or from the file ``NAME_FILE`` names (a mounted Secret).

        Files are how Kubernetes and docker-compose hand secrets over without putting them in
        the environment of every process; a trailing newline in the file is not part of it.
        """
        path = self._env.get(f"{name}_FILE", "").strip()
        if path:
            if self._env.get(name, "").strip():
                self.problems.append(f"set {name} or {name}_FILE, not both")
                return ""
            try:
                with open(path, encoding="utf-8") as file:
                    value = file.read().strip()
            except OSError as error:
                self.problems.append(f"{name}_FILE={path!r} cannot be read: {error.strerror}")
                return ""
            if not value:
                self.problems.append(f"{name}_FILE={path!r} is empty")
            return value
        value = self._env.get(name, "").strip()
        if not value and required:
            self.problems.append(
                f"{name} (or {name}_FILE) is required but not set (e.g. {example})"
            )
        return value

    def choice(self, name: str, *, choices: tuple[str, ...], default: str) -> str:
        """One of a fixed set of words, compared case-insensitively and returned upper-case."""
        raw = (self._raw(name, default, default) or "").upper()
        if raw not in choices:
            self.problems.append(f"{name}={raw!r} must be one of {', '.join(choices)}")
            return default
        return raw

    def url(self, name: str, *, schemes: tuple[str, ...], example: str) -> str:
        """A required URL whose scheme is one of ``schemes`` and which names a host."""
        raw = self._raw(name, None, example)
        if raw is None:
            return example
        return raw if self._valid_url(name, raw, schemes, example) else example

    def url_list(self, name: str, *, schemes: tuple[str, ...], example: str) -> str:
        """``url``, or several separated by commas: every server of a cluster, each checked.

        Returned as given; the client splits it (``platform.nats.connect_nats``).
        """
        raw = self._raw(name, None, example)
        if raw is None:
            return example
        urls = [part.strip() for part in raw.split(",")]
        if not all(self._valid_url(name, url, schemes, example) for url in urls):
            return example
        return ",".join(urls)

    def _valid_url(self, name: str, raw: str, schemes: tuple[str, ...], example: str) -> bool:
        parts = urlsplit(raw)
        if parts.scheme not in schemes or not parts.hostname:
            self.problems.append(
                f"{name}={_redact(raw)!r} must be a {'/'.join(schemes)} URL like {example}"
            )
            return False
        try:
            parts.port  # noqa: B018 - accessing .port validates it
        except ValueError:
            self.problems.append(f"{name}={_redact(raw)!r} has an invalid port")
            return False
        return True

    def address(self, name: str, *, example: str) -> str:
        """A required ``host:port`` gRPC target, the form ``grpc.aio.insecure_channel`` takes."""
        raw = self._raw(name, None, example)
        if raw is None:
            return example
        host, _, port = raw.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= 65535:
            self.problems.append(f"{name}={raw!r} must be host:port like {example}")
            return example
        return raw


def load(env: Mapping[str, str], read: Callable[[EnvReader], Settings]) -> Settings:
    """Build settings with ``read`` and raise one ``SettingsError`` listing every problem."""
    reader = EnvReader(env)
    settings = read(reader)
    if reader.problems:
        raise SettingsError(reader.problems)
    return settings


@dataclass(frozen=True)
class ServerSettings:
    """What every gRPC service needs to run: where to listen and how loudly to log."""

    log_level: str
    grpc_port: int
    metrics_port: int
    #: The address the gRPC and metrics servers listen on (``LISTEN_HOST``); empty: every
    #: interface (a container's), ``127.0.0.1`` for ``cardtable run``.
    listen_host: str
    # Large enough for a whole table's event history in one reply, small enough to stop abuse.
    max_receive_message_bytes: int
    # Time given to in-flight RPCs after SIGTERM; keep below Kubernetes' terminationGracePeriod.
    shutdown_grace_seconds: float
    # Time spent NOT_SERVING but still answering before refusing calls, so probes notice first.
    shutdown_drain_seconds: float

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``LOG_LEVEL``, ``LISTEN_HOST``, ``GRPC_PORT``, ``METRICS_PORT`` and the tuning
        knobs."""
        return cls(
            log_level=env.choice("LOG_LEVEL", choices=LOG_LEVELS, default="INFO"),
            grpc_port=env.port("GRPC_PORT", default=50051),
            metrics_port=env.port("METRICS_PORT", default=9464),
            listen_host=env.string("LISTEN_HOST", default=""),
            max_receive_message_bytes=env.integer(
                "GRPC_MAX_RECEIVE_MESSAGE_BYTES",
                default=4 * 1024 * 1024,
                minimum=1024,
                maximum=256 * 1024 * 1024,
            ),
            shutdown_grace_seconds=env.seconds("SHUTDOWN_GRACE_SECONDS", default=10.0),
            shutdown_drain_seconds=env.seconds("SHUTDOWN_DRAIN_SECONDS", default=0.0),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read only these settings, failing fast."""
        return load(env, cls.read)


def read_event_prefix(env: EnvReader) -> str:
    """``EVENT_PREFIX`` (default ``cardtable``), checked as every component derives its names
    from it (platform/log_names.py)."""
    from cardtable.platform.log_names import DEFAULT_PREFIX, LogNameError, check_prefix

    prefix = env.string("EVENT_PREFIX", default=DEFAULT_PREFIX)
    try:
        return check_prefix(prefix)
    except LogNameError as error:
        env.problem(str(error))
        return DEFAULT_PREFIX


@dataclass(frozen=True)
class NatsCredentials:
    """Who a process is on NATS, and which certificate authority it trusts for TLS.

    Every component has its own user (platform/nats_access.py); the password comes from
    ``NATS_PASSWORD`` or the file ``NATS_PASSWORD_FILE`` names, never from the image.
    """

    user: str = ""
    password: str = field(default="", repr=False)
    #: PEM file of the authority that signed the NATS servers' certificates; enables TLS.
    tls_ca_file: str = ""

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect``."""
        options: dict[str, Any] = {}
        if self.user:
            options["user"] = self.user
            options["password"] = self.password
        if self.tls_ca_file:
            context = ssl.create_default_context(cafile=self.tls_ca_file)
            options["tls"] = context
        return options


def read_credentials(env: EnvReader) -> NatsCredentials:
    """``NATS_USER``, ``NATS_PASSWORD`` (or ``NATS_PASSWORD_FILE``) and ``NATS_TLS_CA_FILE``,
    checked the same way for services and tools."""
    user = env.string("NATS_USER", default="")
    password = env.secret("NATS_PASSWORD")
    if user and not password:
        env.problem("NATS_USER is set without NATS_PASSWORD (or NATS_PASSWORD_FILE)")
    if password and not user:
        env.problem("NATS_PASSWORD is set without NATS_USER")
    ca_file = env.string("NATS_TLS_CA_FILE", default="")
    if ca_file and not os.path.isfile(ca_file):
        env.problem(f"NATS_TLS_CA_FILE={ca_file!r} is not a file")
    return NatsCredentials(user=user, password=password, tls_ca_file=ca_file)


def credentials_from(env: Mapping[str, str]) -> NatsCredentials:
    """A tool's NATS user from ``env``, failing fast like a service's settings."""
    return load(env, read_credentials)


@dataclass(frozen=True)
class NatsSettings:
    """Where the JetStream event store is. Required: a default would silently split the log."""

    url: str
    credentials: NatsCredentials = field(default_factory=NatsCredentials)

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``NATS_URL`` (one server, or every server of a cluster separated by commas),
        ``NATS_USER``, ``NATS_PASSWORD`` and ``NATS_TLS_CA_FILE``."""
        return cls(
            url=env.url_list(
                "NATS_URL", schemes=("nats", "tls", "ws", "wss"), example=EXAMPLE_NATS
            ),
            credentials=read_credentials(env),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read only these settings, failing fast."""
        return load(env, cls.read)


@dataclass(frozen=True)
class LogReadingSettings:
    """What an operator's tool needs to read the event log: ``NATS_URL`` (required),
    ``EVENT_PREFIX`` and the operator's NATS user."""

    url: str
    prefix: str
    credentials: NatsCredentials = field(default_factory=NatsCredentials)

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``NATS_URL`` and the NATS credentials as a service does, and ``EVENT_PREFIX``."""
        nats = NatsSettings.read(env)
        return cls(url=nats.url, prefix=read_event_prefix(env), credentials=nats.credentials)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read only these settings, failing fast."""
        return load(env, cls.read)


@dataclass(frozen=True)
class PostgresSettings:
    """Where the projections live and how many connections one replica may hold."""

    url: str
    pool_min_size: int
    pool_max_size: int
    # How long start-up waits for the database, e.g. while it boots next to us in a cluster.
    connect_timeout_seconds: float

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``DATABASE_URL`` and the pool bounds."""
        settings = cls(
            url=env.url("DATABASE_URL", schemes=("postgres", "postgresql"), example=EXAMPLE_PG),
            pool_min_size=env.integer("DATABASE_POOL_MIN", default=1, minimum=0, maximum=100),
            pool_max_size=env.integer("DATABASE_POOL_MAX", default=10, minimum=1, maximum=100),
            connect_timeout_seconds=env.seconds("DATABASE_CONNECT_TIMEOUT_SECONDS", default=30.0),
        )
        if settings.pool_min_size > settings.pool_max_size:
            env.problem(
                f"DATABASE_POOL_MIN={settings.pool_min_size} exceeds "
                f"DATABASE_POOL_MAX={settings.pool_max_size}"
            )
        return settings

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read only these settings, failing fast."""
        return load(env, cls.read)


@dataclass(frozen=True)
class RulesClientSettings:
    """Where the rules service answers, for the services that call it."""

    address: str

    @classmethod
    def read(cls, env: EnvReader) -> Self:
        """Read ``RULES_ADDRESS``."""
        return cls(address=env.address("RULES_ADDRESS", example="rules:50051"))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Read only these settings, failing fast."""
        return load(env, cls.read)
