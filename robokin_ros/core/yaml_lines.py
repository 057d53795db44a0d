"""YAML files read with their line numbers, so that every problem can be reported as `file:line: problem`.

`read_yaml` returns plain Python data in which every mapping is a `LineDict` and every list a `LineList`: a dict
or list that also knows the 1-based line it starts on (`line`) and the line of each key or item. Code that
checks the data afterwards names the line with `where(path, value)`. A YAML syntax error becomes one line
naming the file, the line and the parser's problem (PyYAML's own message spans several lines with a marker).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from robokin_ros.core.errors import InvalidInputError


class LineDict(dict):
    """A YAML mapping that remembers its first line and each key's line (1-based)."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        """The line of `key` (the mapping's own line when the key is unknown)."""
        return getattr(self, "key_lines", {}).get(key, self.line)


class LineList(list):
    """A YAML sequence that remembers its first line and each item's line (1-based)."""

    line: int = 0
    item_lines: list

    def line_of(self, index: int) -> int:
        """The line of item `index` (the list's own line when out of range)."""
        lines = getattr(self, "item_lines", [])
        return lines[index] if 0 <= index < len(lines) else self.line


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences carry their line numbers."""


def _mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    value = LineDict(loader.construct_mapping(node, deep=True))
    value.line = node.start_mark.line + 1
    value.key_lines = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool)) or key is None:
            value.key_lines[key] = key_node.start_mark.line + 1
    return value


def _sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    value = LineList(loader.construct_sequence(node, deep=True))
    value.line = node.start_mark.line + 1
    value.item_lines = [item.start_mark.line + 1 for item in node.value]
    return value


_LineLoader.add_constructor("tag:yaml.org,2002:map", _mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _sequence)


def yaml_problem(err: yaml.YAMLError) -> tuple[int, str]:
    """(1-based line or 0, one-line description) of a PyYAML error."""
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        text = err.problem or err.context or "cannot parse"
        if err.context and err.problem and err.context_mark is not None:
            text += f" ({err.context} at line {err.context_mark.line + 1})"
        return (mark.line + 1 if mark is not None else 0), text
    return 0, " ".join(str(err).split())


def read_text(path: str | Path, what: str, reading: str = "") -> str:
    """The text of a file; InvalidInputError "<path>: <what> not found" or "<path>: cannot read <reading or what>:
    <reason>" in one line."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{path}: {what} not found")
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidInputError(f"{path}: cannot read {reading or what}: "
                                f"{getattr(err, 'strerror', None) or err}") from None


def read_yaml(path: str | Path, what: str = "YAML file") -> Any:
    """The parsed YAML of `path`, mappings and lists carrying their lines.

    Raises:
        InvalidInputError: one line, "<path>: <what> not found", "<path>:<line>: not valid YAML: <problem>" or
            "<path>: cannot read <what>: <reason>".
    """
    path = Path(path)
    text = read_text(path, what)
    try:
        return yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as err:
        line, problem = yaml_problem(err)
        raise InvalidInputError(f"{where(path, line)}: not valid YAML: {problem}") from None


def line_of(value: Any, key: Any = None) -> int:
    """The 1-based line of a value read by `read_yaml` (of its `key` or item when given); 0 when unknown."""
    if isinstance(value, (LineDict, LineList)):
        return value.line if key is None else value.line_of(key)
    return 0


def where(path: str | Path, line: int | Any) -> str:
    """"path:line" (a value read by `read_yaml` stands for its line), or the path alone without a line."""
    number = line if isinstance(line, int) and not isinstance(line, bool) else line_of(line)
    return f"{path}:{number}" if number else str(path)
