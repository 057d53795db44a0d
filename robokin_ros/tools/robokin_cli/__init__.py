"""robokin: the classroom toolbox on the command line (fk, ik, workspace, calibrate, dh2urdf).

Each subcommand module defines HELP (one line), `add_arguments(parser)` and `run(args) -> int` (0 = success).
"""
from __future__ import annotations

import argparse
import importlib
import sys

from robokin_ros.core.errors import RobokinError

SUBCOMMANDS = ("fk", "ik", "workspace", "calibrate", "dh2urdf")


def parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand (modules imported lazily, only to build their parsers)."""
    top = argparse.ArgumentParser(prog="robokin", description=__doc__.split("\n")[0])
    commands = top.add_subparsers(dest="command", required=True, metavar="command")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"robokin_ros.tools.robokin_cli.{name}")
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return top


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `robokin` console script."""
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (RobokinError, FileNotFoundError) as err:
        print(f"robokin {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
