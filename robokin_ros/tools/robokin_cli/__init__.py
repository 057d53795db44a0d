"""robokin: the classroom toolbox on the command line (fk, ik, workspace, calibrate, dh2urdf).

Each subcommand module defines HELP (one line), `add_arguments(parser)` and `run(args) -> int` (0 = success), and
may list NUMBER_LISTS: options that take numbers which may start with "-pi" (see `join_number_lists`).
Bad input is one line on stderr, `robokin <command>: error: <problem>` (naming `file:line` for a file), exit 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from robokin_ros.core.errors import RobokinError
from robokin_ros.tools.cli_errors import OneLineParser, report

SUBCOMMANDS = ("fk", "ik", "workspace", "calibrate", "dh2urdf")


def parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand (modules imported lazily, only to build their parsers)."""
    top = OneLineParser(prog="robokin", description=__doc__.split("\n")[0])
    commands = top.add_subparsers(dest="command", required=True, metavar="command")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"robokin_ros.tools.robokin_cli.{name}")
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return top


def join_number_lists(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """`--q 0 -pi/2` -> `--q=0,-pi/2` for the given options: argparse takes "-pi/2" for an option (only plain
    negative numbers like -1.5 pass), so the values after such an option are joined into its `=` form while they
    parse as numbers ("0", "-pi/2", "1e-3", "0,-pi/2")."""
    from robokin_ros.tools.robokin_cli.dh2urdf import parse_number

    def is_numbers(token: str) -> bool:
        try:
            return all(parse_number(part) is not None for part in token.split(",") if part.strip())
        except ValueError:
            return False

    out, i = [], 0
    while i < len(argv):
        token = argv[i]
        if token in options:
            values = []
            while i + 1 < len(argv) and is_numbers(argv[i + 1]):
                values.append(argv[i + 1])
                i += 1
            out.append(f"{token}={','.join(values)}" if values else token)
        else:
            out.append(token)
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `robokin` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((token for token in argv if token in SUBCOMMANDS), None)
    if command is not None:
        module = importlib.import_module(f"robokin_ros.tools.robokin_cli.{command}")
        argv = join_number_lists(argv, getattr(module, "NUMBER_LISTS", ()))
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (RobokinError, OSError) as err:
        return report(f"robokin {args.command}", err)


if __name__ == "__main__":
    sys.exit(main())
