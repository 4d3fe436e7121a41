"""cardtable: an event-sourced backend for online trick-taking card games."""

import os

# gRPC's fork handlers crash (or warn about) a child forked with a ``preexec_fn`` while grpc.aio
# threads run, which is how the embedded servers start and restart under the CLI's benchmarks.
# Nothing of ours forks to use gRPC in a child, so they are off unless the operator says otherwise.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
