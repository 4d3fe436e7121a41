"""The type every command group registers its subcommands on."""

from __future__ import annotations

import argparse
from typing import TypeAlias

#: ``parser.add_subparsers()``'s result: each group adds its commands with ``add_parser``.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
