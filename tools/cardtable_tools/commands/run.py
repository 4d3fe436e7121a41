"""``cardtable run``: the whole system on this machine until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
from functools import partial
from pathlib import Path

from cardtable.cli.console import report_console
from cardtable.cli.subcommands import Subcommands


def cmd_run(args: argparse.Namespace) -> int:
    from cardtable_tools.stack.run import run_stack

    console = report_console(stderr=False)
    return asyncio.run(
        run_stack(
            Path(args.log_dir),
            # printed commands stay one line each, ready to paste
            partial(console.print, soft_wrap=True),
            demo=not args.no_demo,
            # a live display redraws in place; in a file its last frame would run into the
            # next line printed, so there the demonstration's table is printed once, at the end
            live=console.is_terminal,
            listen_host=args.host,
            exit_after_demo=args.exit_after_demo,
            nats_cluster=args.nats_cluster,
        )
    )


def register(commands: Subcommands) -> None:
    """Add ``run``."""
    run = commands.add_parser("run", help="run the whole system locally until Ctrl-C")
    run.add_argument(
        "--log-dir",
        default=".run/logs",
        help="where the services write their logs; its parent holds nats.conf, env and the lock",
    )
    run.add_argument("--no-demo", action="store_true", help="serve without the demonstration")
    run.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address the services listen on (default: this machine only)",
    )
    run.add_argument(
        "--exit-after-demo", action="store_true", help="stop everything once the demo is shown"
    )
    run.add_argument(
        "--nats-cluster",
        type=int,
        default=1,
        metavar="N",
        help="run N clustered NATS servers (3: as in production; the log and buckets get 3 "
        "replicas and every service all N URLs); ignored when NATS_URL is set",
    )
    run.set_defaults(handler=cmd_run)
