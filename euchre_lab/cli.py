"""The one command-line layer of the tools (`train`, `evaluate`, `play`, `teacher`, the benchmarks, the RLlib example).

A tool declares its options as a dataclass whose fields carry one-line docstrings; `option_parser` turns
it into an argparse parser (the docstrings become `--help`), `given_options` reads a command line into
typed values, `read_options` reads a `--config` preset of the same options, and `layered` stacks
defaults < preset < command line; `script_options` does it all for a script without presets (the
benchmarks), and `check_ranges` refuses a number outside its `Range`. Shared grammar, once:

- a field `some_name` is the flag `--some-name` (and `--some_name`); a bool is `--some-name` (true),
  `--some-name true|false` or `--no-some-name`; a list takes one or more values;
- `--rules KEY=VALUE ...`: rule options as `key=value` items (values read as YAML: `true`, `5`,
  `left_of_dealer`) or YAML mappings (`"{deck: 32, joker: true}"`), whatever `Rules` accepts;
- every bad input is one line, `TOOL: error: ...`, and exit status 2 (`OneLineErrorParser`, `fail`).

`remove_stale_temp_files` clears what an interrupted atomic write (`euchre_agents.atomic.write_atomic`,
killed with `kill -9`) leaves behind when a tool starts again.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Sequence

import yaml

from euchre_agents.atomic import TEMP_FILES
from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_env import Engine
from euchre_lab.invocation import help_command, tool_name
from euchre_lab.presets import read_preset

RULES = "rules"
"""The option every tool spells the same way: rule changes merged key by key across the layers."""


class OptionError(ValueError):
    """An option, preset or input the tool cannot run with (reported in one line, exit status 2)."""


# ---------------------------------------------------------------- options as a dataclass


def field_docs(cls: type) -> dict[str, str]:
    """Each dataclass field's docstring (the string literal right after it), stripped."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    return {
        node.target.id: after.value.value.strip()
        for node, after in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
    }


def flag(name: str) -> str:
    """The command-line flag of an option: `num_envs` -> `--num-envs`, `lambda_` -> `--lambda`."""
    return "--" + name.rstrip("_").replace("_", "-")


@dataclasses.dataclass(frozen=True)
class OptionType:
    """What an option holds: its base type (`int`, `str`, `list`, `dict`, ...), whether None is allowed, and
    the type of a list's items where they are numbers (`list[int]`)."""

    kind: type
    optional: bool = False
    item: type | None = None


def option_types(cls: type) -> dict[str, OptionType]:
    """Each field's `OptionType`, read from its annotation (`int | None` -> OptionType(int, True))."""
    out = {}
    for name, hint in typing.get_type_hints(cls).items():
        args = typing.get_args(hint)
        optional = (typing.get_origin(hint) in (typing.Union, types.UnionType)) and type(None) in args
        if optional:
            hint = next(a for a in args if a is not type(None))
        item = next(iter(typing.get_args(hint)), None)
        out[name] = OptionType(typing.get_origin(hint) or hint, optional, item if item in (int, float) else None)
    return out


def coerce(name: str, value: Any, kind: OptionType) -> Any:
    """A preset or command-line value converted to its option's type, or an OptionError naming the option."""
    base = kind.kind
    if kind.optional and (value is None or (base is not str and isinstance(value, str) and value.lower() in ("none", "null"))):
        return None
    if isinstance(value, str) and base is not str:
        try:
            value = base(value.replace("_", "")) if base in (int, float) else yaml.safe_load(value)
        except (ValueError, yaml.YAMLError):
            pass
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if base is dict and value is None:
        value = {}
    if base is list and isinstance(value, (str, tuple)):
        value = [value] if isinstance(value, str) else list(value)
    if not isinstance(value, base) or (base is int and isinstance(value, bool)):
        raise OptionError(f"option {name}: expected {base.__name__}, got {value!r}")
    if kind.item is not None:
        value = [coerce(name, v, OptionType(kind.item)) for v in value]
    return value


# ---------------------------------------------------------------- --rules


def _yaml_value(text: str) -> Any:
    """A --rules value read as YAML, or a one-line OptionError."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise OptionError(f"--rules: {text!r} is not valid YAML ({getattr(e, 'problem', None) or 'unreadable'})") from None


def parse_rules(items: Sequence[str] | str | dict[str, Any] | None) -> dict[str, Any]:
    """Rule changes from `key=value` items (values read as YAML) or YAML mappings such as `{deck: 32}`;
    a mapping (a preset's `rules:`) is returned as it is. Whether `Rules` accepts them is `Rules`' to say."""
    if items is None:
        return {}
    if isinstance(items, dict):
        return dict(items)
    out: dict[str, Any] = {}
    for item in [items] if isinstance(items, str) else items:
        key, sep, value = item.partition("=")
        if item.lstrip().startswith("{"):
            mapping = _yaml_value(item)
            if not isinstance(mapping, dict):
                raise OptionError(f"--rules: {item!r} is not a YAML mapping")
            out.update(mapping)
        elif sep and key.strip():
            out[key.strip()] = _yaml_value(value)
        else:
            raise OptionError(f"--rules takes key=value items or a YAML mapping such as '{{deck: 32}}', got {item!r}")
    return out


# ---------------------------------------------------------------- the parser


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse with its errors on one line, `TOOL: error: ... (TOOL --help lists every option)`, exit 2."""

    def __init__(self, *args: Any, script: str, **kwargs: Any):
        self.script = script
        super().__init__(*args, prog=tool_name(script), **kwargs)

    def error(self, message: str) -> typing.NoReturn:
        """Print the one line (naming the installed command when run as one) and exit with status 2."""
        self.exit(2, f"{tool_name(self.script)}: error: {message} ({help_command(self.script)} lists every option)\n")


BOOL_WORDS = {"true": True, "false": False}
"""The values a bool option may be given (`--progress false`), case-insensitive."""


def _spelled_switches(argv: Sequence[str], switches: set[str]) -> list[str]:
    """`argv` with each bool option given a value (`--x true`, `--x=false`) spelled as a switch (`--x`,
    `--no-x`), so that a switch never takes a positional argument that follows it as its value."""
    out: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token, value = tokens[i], None
        name, eq, inline = token.partition("=")
        if name in switches and eq:
            value = inline
        elif token in switches and i + 1 < len(tokens) and tokens[i + 1].lower() in BOOL_WORDS:
            name, value = token, tokens[i + 1]
            i += 1
        if value is None:
            out.append(token)
        elif value.lower() in BOOL_WORDS:
            out.append(name if BOOL_WORDS[value.lower()] else "--no-" + name[2:])
        else:
            raise OptionError(f"option {name[2:].replace('-', '_')}: expected bool, got {value!r}")
        i += 1
    return out


def _each(classes: type | tuple[type, ...]) -> tuple[type, ...]:
    return classes if isinstance(classes, tuple) else (classes,)


def option_parser(
    classes: type | tuple[type, ...],
    script: str,
    description: str,
    *,
    positional: dict[str, dict[str, Any]] | None = None,
    special: dict[str, dict[str, Any]] | None = None,
) -> OneLineErrorParser:
    """The parser of the options of a dataclass (or of several, in turn): each field's docstring and default
    as its help, no defaults of its own (an option not given is absent, so that presets can fill it).
    `positional` names fields taken as positional arguments and `special` fields with their own argparse keywords."""
    parser = OneLineErrorParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False, script=script
    )
    for cls in _each(classes):
        _add_options(parser, cls, positional or {}, special or {})
    return parser


def _add_options(parser: argparse.ArgumentParser, cls: type, positional: dict[str, dict[str, Any]],
                 special: dict[str, dict[str, Any]]) -> None:
    """One dataclass's fields as arguments of `parser`."""
    docs, kinds, defaults = field_docs(cls), option_types(cls), cls()
    for f in dataclasses.fields(cls):
        kind = kinds[f.name].kind
        if f.name in positional:
            extra = positional[f.name]
        elif f.name in special:
            extra = special[f.name]
        elif kind is bool:
            extra = dict(action=argparse.BooleanOptionalAction)
        elif f.name == RULES:
            extra = dict(nargs="+", metavar="KEY=VALUE")
        elif kind is list:
            extra = dict(nargs="+", metavar="VALUE")
        else:
            extra = dict(metavar=kind.__name__.upper())
        required = extra.get("required") or (f.name in positional and extra.get("nargs") not in ("?", "*"))
        default = "" if required else f" (default: {getattr(defaults, f.name)!r})"
        help_text = f"{docs[f.name]}{default}".replace("%", "%%")
        if f.name in positional:
            parser.add_argument(f.name, default=argparse.SUPPRESS, help=help_text, **extra)
        elif extra.get("action") is argparse.BooleanOptionalAction:  # the `_` spelling works, unlisted
            parser.add_argument(flag(f.name), dest=f.name, default=argparse.SUPPRESS, help=help_text, **extra)
            if flag(f.name) != f"--{f.name}":
                parser.add_argument(f"--{f.name}", dest=f.name, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **extra)
        else:
            flags = list(dict.fromkeys([flag(f.name), f"--{f.name}"]))
            parser.add_argument(*flags, dest=f.name, default=argparse.SUPPRESS, help=help_text, **extra)


def given_options(parser: argparse.ArgumentParser, classes: type | tuple[type, ...], argv: Sequence[str] | None) -> dict[str, Any]:
    """The options given on the command line `argv` (sys.argv's when None), converted to their types."""
    kinds = {name: kind for cls in _each(classes) for name, kind in option_types(cls).items()}
    switches = {f for name, kind in kinds.items() if kind.kind is bool for f in (flag(name), f"--{name}")}
    given = vars(parser.parse_args(_spelled_switches(sys.argv[1:] if argv is None else argv, switches)))
    if RULES in given:
        given[RULES] = parse_rules(given[RULES])
    return {name: coerce(name, value, kinds[name]) for name, value in given.items()}


def read_options(path: str, cls: type, example: str, *, command_line_only: Sequence[str] = ()) -> dict[str, Any]:
    """A YAML preset's options, checked against `cls` (unknown keys and command-line-only ones refused)."""
    try:
        values = read_preset(path, example)
    except ValueError as e:
        raise OptionError(str(e)) from None
    kinds = option_types(cls)
    known = sorted(set(kinds) - set(command_line_only))
    unknown = sorted(set(values) - set(kinds))
    if unknown:
        raise OptionError(f"{path}: unknown option(s) {unknown}; known: {known}")
    refused = sorted(set(values) & set(command_line_only))
    if refused:
        raise OptionError(f"{path}: {refused} can only be given on the command line")
    if RULES in values:
        values[RULES] = parse_rules(values[RULES])
    return {k: coerce(k, v, kinds[k]) for k, v in values.items()}


def layered(*layers: dict[str, Any]) -> dict[str, Any]:
    """Option layers stacked, each over the last; `rules` are merged key by key."""
    out: dict[str, Any] = {}
    rules: dict[str, Any] = {}
    for layer in layers:
        out.update(layer)
        rules.update(layer.get(RULES) or {})
    if any(RULES in layer for layer in layers):
        out[RULES] = rules
    return out


def script_options(cls: type, script: str, description: str, argv: Sequence[str] | None = None, **parser_keywords: Any) -> Any:
    """The options of a tool without presets (a benchmark) as an instance of `cls`: its defaults
    under the command line `argv` (sys.argv's when None). `parser_keywords` go to `option_parser`
    (`positional`, `special`). A bad value raises OptionError; argparse's own errors exit 2 in one line."""
    parser = option_parser(cls, script, description, **parser_keywords)
    return cls(**layered(dataclasses.asdict(cls()), given_options(parser, cls, argv)))


# ---------------------------------------------------------------- number ranges


@dataclasses.dataclass(frozen=True)
class Range:
    """The finite numbers an option may take: `low` or more (greater than `low` when `above`), at most `high`."""

    low: float
    high: float = math.inf
    above: bool = False

    def holds(self, value: float) -> bool:
        """Whether `value` is a finite number in the range (NaN and the infinities never are)."""
        return math.isfinite(value) and (value > self.low if self.above else value >= self.low) and value <= self.high

    def __str__(self) -> str:
        if self.high == math.inf:
            return f"greater than {self.low:g}" if self.above else f"{self.low:g} or more"
        if self.above:
            return f"greater than {self.low:g} and at most {self.high:g}"
        return f"between {self.low:g} and {self.high:g}"


def at_least(low: float) -> Range:
    """`low` or more (a count: `at_least(1)`)."""
    return Range(low)


def above(low: float) -> Range:
    """Greater than `low` (a rate or a time: `above(0)`)."""
    return Range(low, above=True)


def between(low: float, high: float) -> Range:
    """From `low` to `high`, both included (a fraction: `between(0, 1)`)."""
    return Range(low, high)


def check_ranges(options: Any, ranges: dict[str, Range]) -> None:
    """An OptionError naming the first option outside its range, with the option's docstring where it has
    one (`--num-envs must be greater than 0, got 0 (games stepped together)`); a list's items are checked
    one by one, and None (an option left unset) passes. The one home of every tool's "must be N or more"
    and "must be between" checks."""
    for name, allowed in ranges.items():
        value = getattr(options, name)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is not None and not allowed.holds(item):
                needs = allowed if math.isfinite(item) else "a finite number"
                raise OptionError(f"{flag(name)} must be {needs}, got {item!r}{described(type(options), name)}")


def described(cls: type, name: str) -> str:
    """` (the field's docstring)` on one line, or "" where the field has none or its source is not at hand."""
    try:
        doc = field_docs(cls).get(name)
    except (OSError, TypeError):
        return ""
    return f" ({' '.join(doc.split())})" if doc else ""


def checked_agent(spec: str, what: str, engine: Engine, seed: int | None = None) -> Agent:
    """The bot `spec` names, built for `engine`; an OptionError `WHAT: <why>` for a misspelt bot, a bad option
    or a checkpoint that cannot play here, so that it fails before any work starts."""
    try:
        return make_agent(spec, engine, seed=seed)
    except ValueError as e:  # RulesError and CheckpointError are ValueErrors
        raise OptionError(f"{what}: {e}") from None


def fail(script: str, error: BaseException | str) -> int:
    """Print `TOOL: error: <error>` as one line on stderr; the exit status of a bad input, 2."""
    print(f"{tool_name(script)}: error: {error}", file=sys.stderr)
    return 2


def interrupted(script: str, kept: str) -> int:
    """Print `TOOL: interrupted; <kept>` as one line on stderr, saying what Ctrl-C (or a stop from a driver) left
    and how to continue; the exit status of a stopped tool, 130."""
    print(f"\n{tool_name(script)}: interrupted; {kept}", file=sys.stderr, flush=True)
    return 130


def exit_from(main: typing.Callable[[], int], script: str, kept: str) -> typing.NoReturn:
    """Exit with `main()`'s status; on Ctrl-C `interrupted`'s line saying what is `kept`, status 130."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = interrupted(script, kept)
    sys.exit(code)


# ---------------------------------------------------------------- files


def remove_stale_temp_files(folder: Path, script: str, recursive: bool = False) -> int:
    """Delete the temp files (`TEMP_FILES`) that interrupted atomic writes left in `folder` (and below it,
    if `recursive`), saying how many in one line on stderr; the count. Call it when a tool starts, before
    it writes there itself."""
    folder = Path(folder)
    found = (folder.rglob if recursive else folder.glob)(TEMP_FILES) if folder.is_dir() else []
    stale = [p for p in found if p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    if stale:
        print(f"{tool_name(script)}: removed {len(stale)} stale .tmp file{'s' * (len(stale) != 1)} that an interrupted write "
              f"left in {folder}", file=sys.stderr, flush=True)
    return len(stale)
