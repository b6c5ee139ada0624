"""The `key=value` options of a sampling bot's spec (`pimc:worlds=8,infer=true`, `search:PATH,eps=0.2`).

One grammar for every bot that samples layouts: comma-separated `key=value` items, each value typed
(a number, `true|false|1|0`, or a non-empty string), the shared sampling options range-checked
(`worlds` and `candidates` >= 1, 0 < `eps` <= 1, `temp` and `z` >= 0), and the options that belong to one
switch (`infer`, `weighted`) refused while it is off. Every error is one line that names the fix.
"""

from __future__ import annotations

import dataclasses
from typing import Any

RANGES = (
    ("worlds", "worlds >= 1", lambda v: v < 1),
    ("candidates", "candidates >= 1", lambda v: v < 1),
    ("eps", "0 < eps <= 1", lambda v: not 0.0 < v <= 1.0),
    ("temp", "temp >= 0", lambda v: v < 0.0),
    ("z", "z >= 0", lambda v: not v >= 0.0),
)
"""(option, the rule its error states, whether a value breaks it), in the order they are checked."""


@dataclasses.dataclass(frozen=True)
class SpecOptions:
    """One bot's spec options: their types, the notes its errors give, and the options of its switch."""

    bot: str
    """The bot's name, as its errors call it (`pimc option eps takes a number`)."""
    types: dict[str, type]
    """Each option and its type: int, float, bool or str."""
    help: str
    """What an unknown option's error ends with (`options: ...` or `usage: ...`)."""
    notes: dict[str, str]
    """Per range-checked option, the words in brackets after its rule (`layouts drawn per world kept`)."""
    switch: str
    """The bool option that the `switched` options need on (`infer`, `weighted`)."""
    switch_default: bool
    """The switch's value when the spec leaves it out."""
    switched: tuple[str, ...]
    """The options that apply only with the switch on."""
    switch_fix: str
    """The advice before the spec when a switched option is given with the switch off (`add infer=true to`)."""
    defaults: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Options filled in when absent."""
    bare_number: str | None = None
    """The option a bare number sets (`pimc:8` = `pimc:worlds=8`), or None."""

    def parse(self, items: list[str], arg: str) -> dict[str, Any]:
        """The options of `items` (the spec's comma-separated parts, `arg` the whole spec for errors); ValueError naming the fix."""
        options: dict[str, Any] = dict(self.defaults)
        for item in filter(None, (part.strip() for part in items)):
            key, sep, value = item.partition("=")
            if not sep and key.isdigit() and self.bare_number:
                key, value = self.bare_number, key
            if key not in self.types:
                raise ValueError(f"unknown {self.bot} option {key!r} in {arg!r}; {self.help}")
            options[key] = self._value(key, value.strip(), arg)
        self._check(options, arg)
        return options

    def _value(self, key: str, value: str, arg: str) -> Any:
        kind = self.types[key]
        if kind is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"{self.bot} option {key} takes true or false, got {value!r} in {arg!r}")
            return value.lower() in ("true", "1")
        if kind is str:
            if not value:
                raise ValueError(f"{self.bot} option {key} needs a value (e.g. {key}=heuristic) in {arg!r}")
            return value
        try:
            return kind(value)
        except ValueError:
            raise ValueError(f"{self.bot} option {key} takes a number, got {value!r} in {arg!r}") from None

    def _check(self, options: dict[str, Any], arg: str) -> None:
        for key, rule, breaks in RANGES:
            if key in options and breaks(options[key]):
                note = f" ({self.notes[key]})" if key in self.notes else ""
                raise ValueError(f"{self.bot} needs {rule}{note}, got {options[key]}")
        if not options.get(self.switch, self.switch_default):
            stray = [k for k in self.switched if k in options]
            if stray:
                raise ValueError(
                    f"{self.bot} options {', '.join(stray)} only apply with {self.switch}=true; {self.switch_fix} {arg!r}"
                )
