"""Who may do what on NATS: one user per component, each allowed only the subjects it needs.

Anonymous connections are refused wherever this is applied (``make run``, the tests,
docker-compose, Kubernetes): a server configured with ``authorization { users: [...] }`` accepts
only those users. Each component gets:

* **table**: append to its table subjects, read them (direct and message gets), follow the
  republished stored batches, publish seat requests to the bot service, and use the lobby
  bucket. It cannot create or change streams.
* **scoring**: read the events stream through its own durable consumer (create, bind, fetch,
  acknowledge), and by sequence (the leader's message get) while that consumer delivers
  nothing; nothing else: it cannot publish to a table subject.
* **bots**: receive seat requests and use its claims bucket. It cannot read the events stream
  (no consumer, no get, no republished copy): computer players see only what the table service's
  gRPC API shows their seat.
* **operator**: read the events stream and the lobby (export, replay, audit, rebuild, the
  ordered consumers they use), never publish to a table subject.
* **provisioner**: create and converge the stream and the buckets (``cardtable provision``),
  which no service may do under authorization.

Replies come to a per-user inbox prefix (``LogNames.inbox_prefix``), so no user can listen to
another's replies, which would carry the messages of a stream it may not read.

The permissions are data (:func:`permissions`), rendered into a nats-server ``authorization``
block by :func:`authorization_config`; the deploy files are generated from the same function and
a test keeps them in step.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cardtable.platform.log_names import LogNames
from cardtable.platform.settings import NatsCredentials

TABLE, SCORING, BOTS, OPERATOR, PROVISIONER = "table", "scoring", "bots", "operator", "provisioner"
COMPONENTS = (TABLE, SCORING, BOTS, OPERATOR, PROVISIONER)
DEFAULT_SCORING_CONSUMER = "scoring"
#: The JetStream API's subject root.
JS_API = "$JS.API"


@dataclass(frozen=True)
class Permissions:
    """The subjects a user may publish to and subscribe to; everything else is refused."""

    publish: tuple[str, ...]
    subscribe: tuple[str, ...]


def _read_stream(stream: str) -> list[str]:
    """Reading single messages of a stream: the message get and the direct get."""
    return [
        f"{JS_API}.STREAM.INFO.{stream}",
        f"{JS_API}.STREAM.MSG.GET.{stream}",
        f"{JS_API}.DIRECT.GET.{stream}",
        f"{JS_API}.DIRECT.GET.{stream}.>",
    ]


def _ordered_consumers(stream: str) -> list[str]:
    """Ephemeral ordered consumers (a bucket watch, a log read): create, reset, flow control."""
    return [
        f"{JS_API}.CONSUMER.CREATE.{stream}",
        f"{JS_API}.CONSUMER.CREATE.{stream}.>",
        f"{JS_API}.CONSUMER.DELETE.{stream}.>",
        f"{JS_API}.CONSUMER.INFO.{stream}.>",
        f"$JS.FC.{stream}.>",
    ]


def _bucket(bucket: str, *, purge: bool = False) -> list[str]:
    """Using a key-value bucket: put, get, watch (and purge old keys when asked)."""
    stream = LogNames.bucket_stream(bucket)
    subjects = [f"$KV.{bucket}.>", *_read_stream(stream), *_ordered_consumers(stream)]
    if purge:
        subjects.append(f"{JS_API}.STREAM.PURGE.{stream}")
    return subjects


def permissions(
    component: str, names: LogNames, scoring_consumer: str = DEFAULT_SCORING_CONSUMER
) -> Permissions:
    """What ``component`` may do on the log named by ``names`` (module docstring)."""
    inbox = f"{names.inbox_prefix(component)}.>"
    stream = names.stream
    if component == TABLE:
        return Permissions(
            publish=(
                names.tables_subject,
                names.bot_requests,
                *_read_stream(stream),
                *_bucket(names.lobby_bucket, purge=True),
            ),
            # The republished batches, and on NATS before 2.10 (no republishing) the table
            # subjects themselves, which live followers then take as hints.
            subscribe=(inbox, f"{names.stored_root}.>", names.tables_subject),
        )
    if component == SCORING:
        consumer = f"{stream}.{scoring_consumer}"
        return Permissions(
            publish=(
                f"{JS_API}.STREAM.INFO.{stream}",
                # Reading by sequence while the consumer delivers nothing (no leader).
                f"{JS_API}.STREAM.MSG.GET.{stream}",
                f"{JS_API}.CONSUMER.INFO.{consumer}",
                f"{JS_API}.CONSUMER.DELETE.{consumer}",
                f"{JS_API}.CONSUMER.CREATE.{consumer}",
                f"{JS_API}.CONSUMER.CREATE.{consumer}.>",
                f"{JS_API}.CONSUMER.DURABLE.CREATE.{consumer}",
                f"{JS_API}.CONSUMER.MSG.NEXT.{consumer}",
                f"$JS.ACK.{consumer}.>",
            ),
            subscribe=(inbox,),
        )
    if component == BOTS:
        return Permissions(
            publish=tuple(_bucket(names.claims_bucket)),
            subscribe=(inbox, names.bot_requests),
        )
    if component == OPERATOR:
        return Permissions(
            publish=(
                *_read_stream(stream),
                *_ordered_consumers(stream),
                *_read_stream(LogNames.bucket_stream(names.lobby_bucket)),
            ),
            subscribe=(inbox,),
        )
    if component == PROVISIONER:
        managed = (
            stream,
            LogNames.bucket_stream(names.lobby_bucket),
            LogNames.bucket_stream(names.claims_bucket),
        )
        return Permissions(
            publish=tuple(
                f"{JS_API}.STREAM.{verb}.{name}"
                for name in managed
                for verb in ("INFO", "CREATE", "UPDATE")
            ),
            subscribe=(inbox,),
        )
    raise ValueError(f"unknown component {component!r}: one of {', '.join(COMPONENTS)}")


@dataclass(frozen=True)
class NatsUser:
    """One user of the server: a component of one deployment and its password."""

    component: str
    names: LogNames
    password: str

    @property
    def user(self) -> str:
        return f"{self.names.prefix}-{self.component}"

    @property
    def inbox_prefix(self) -> str:
        return self.names.inbox_prefix(self.component)

    def environment(self) -> dict[str, str]:
        """The variables a process of this component reads to connect as this user."""
        return {"NATS_USER": self.user, "NATS_PASSWORD": self.password}

    @property
    def credentials(self) -> NatsCredentials:
        """What ``connect_nats`` takes to connect as this user."""
        return NatsCredentials(user=self.user, password=self.password)


def new_users(names: LogNames, components: Iterable[str] = COMPONENTS) -> dict[str, NatsUser]:
    """A user with a fresh random password for each component of one deployment."""
    return {
        component: NatsUser(component, names, secrets.token_urlsafe(24)) for component in components
    }


def _quoted(text: str) -> str:
    if any(character in text for character in '"\\\n'):
        raise ValueError(f"{text!r} cannot be written into a NATS configuration")
    return f'"{text}"'


def _list(subjects: Iterable[str]) -> str:
    return "[" + ", ".join(_quoted(subject) for subject in subjects) + "]"


def user_config(user: str, password: str, granted: Permissions | None) -> str:
    """One entry of ``authorization.users``; ``password`` may be a ``$VARIABLE`` reference."""
    secret = password if password.startswith("$") else _quoted(password)
    if granted is None:  # an administrator: the tests' own harness, never a service
        return f"    {{user: {_quoted(user)}, password: {secret}}}"
    return (
        f"    {{user: {_quoted(user)}, password: {secret}, permissions: {{\n"
        f"      publish: {{allow: {_list(granted.publish)}}}\n"
        f"      subscribe: {{allow: {_list(granted.subscribe)}}}\n"
        "    }}"
    )


def authorization_config(
    users: Iterable[NatsUser],
    *,
    admins: Mapping[str, str] | None = None,
    scoring_consumer: str = DEFAULT_SCORING_CONSUMER,
) -> str:
    """A nats-server ``authorization`` block admitting exactly ``users`` (and ``admins``)."""
    entries = [
        user_config(
            user.user, user.password, permissions(user.component, user.names, scoring_consumer)
        )
        for user in users
    ]
    entries.extend(user_config(name, password, None) for name, password in (admins or {}).items())
    return "authorization {\n  users: [\n" + "\n".join(entries) + "\n  ]\n}\n"
