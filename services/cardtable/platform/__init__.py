"""The small platform every cardtable service stands on.

Settings from the environment, JSON logs, Prometheus metrics, the grpc.aio server bootstrap and
connections to NATS JetStream and PostgreSQL live here so that each service's ``main.py`` stays a
short composition root. ``dev_servers`` and ``provisioning`` give developers and tests real NATS and
Postgres servers without Docker.

Nothing is re-exported from this package on purpose: importing ``cardtable.platform.settings``
must not drag in grpc, nats or asyncpg, so each caller imports the one module it needs.
"""
