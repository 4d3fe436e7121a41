# syntax=docker/dockerfile:1
#
# One image for every cardtable service; the command chooses which one runs:
#
#   docker build -t cardtable:dev .
#   docker run --rm -e GRPC_PORT=50051 cardtable:dev cardtable-rules
#   docker run --rm -e NATS_URL=... -e RULES_ADDRESS=... -e TOKEN_SIGNING_KEY=... cardtable:dev cardtable-table
#
# No key or password is ever in the image: mount them and name the files (NATS_PASSWORD_FILE,
# LOG_SIGNING_KEY_FILE, ...; deploy/README.md, "Secrets"). cardtable-provision creates the
# event stream and buckets before the services start.
#
# The runtime stage holds only the Python interpreter and a virtualenv with the pinned
# dependencies (constraints.txt) and the cardtable package, compiled to bytecode at build time.
# It runs as an unprivileged numeric user and writes nothing outside /tmp, so it runs with
# readOnlyRootFilesystem (Kubernetes) or read_only (compose).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR /src
RUN python -m venv /opt/cardtable

# Dependencies first, in their own layer: it is rebuilt only when the pins or the list change.
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt \
    && /opt/cardtable/bin/pip install --no-cache-dir -c constraints.txt -r requirements.txt

COPY README.md ./
COPY services/ services/
RUN /opt/cardtable/bin/pip install --no-cache-dir --no-deps . \
    && /opt/cardtable/bin/python -m compileall -q /opt/cardtable/lib


FROM ${PYTHON_IMAGE} AS runtime

LABEL org.opencontainers.image.title="cardtable" \
      org.opencontainers.image.description="Event-sourced backend for trick-taking card games: rules, table, scoring and bot services"

# A fixed numeric id, so that Kubernetes can check runAsNonRoot without reading /etc/passwd.
RUN groupadd --system --gid 10001 cardtable \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin cardtable

COPY --from=build /opt/cardtable /opt/cardtable

ENV PATH=/opt/cardtable/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    GRPC_PORT=50051 \
    METRICS_PORT=9464

WORKDIR /tmp
USER 10001:10001
EXPOSE 50051 9464

# Override with cardtable-table, cardtable-scoring or cardtable-bots (or `cardtable ...`).
CMD ["cardtable-rules"]
