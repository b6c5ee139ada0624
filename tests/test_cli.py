"""The command-line layer every tool shares (`euchre_lab.cli`): one option grammar, one `--rules` grammar,
presets, and the atomic write."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from euchre_lab import cli

from euchre_lab.evaluation import evaluate
from euchre_lab.training.train_checks import check_game
from euchre_lab.training.train_options import Args as TrainArgs
from euchre_lab.training.train_options import parse_args as train_args

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Options:
    bots: list[str] = field(default_factory=list)
    """the bots"""
    hands: int | None = None
    """hands to play"""
    rate: float = 1.0
    """a rate"""
    rules: dict = field(default_factory=dict)
    """rule changes"""
    progress: bool = True
    """show a bar"""
    out: str | None = None
    """a folder"""


def given(*argv: str) -> dict:
    parser = cli.option_parser(Options, "tool.py", "A tool.", positional={"bots": dict(nargs="*", metavar="BOT")})
    return cli.given_options(parser, Options, list(argv))


def test_each_field_is_a_typed_option_with_its_docstring_as_help():
    assert cli.field_docs(Options) == {
        "bots": "the bots", "hands": "hands to play", "rate": "a rate", "rules": "rule changes", "progress": "show a bar",
        "out": "a folder",
    }
    assert given("a", "b", "--hands", "1_000", "--rate", "2") == {"bots": ["a", "b"], "hands": 1000, "rate": 2.0}
    assert given("--hands", "none", "--out", "none") == {"hands": None, "out": "none"}
    help_text = cli.option_parser(Options, "tool.py", "A tool.").format_help()
    assert "hands to play (default: None)" in help_text and "--no-progress" in help_text
    with pytest.raises(cli.OptionError, match="option hands: expected int, got 'many'"):
        given("--hands", "many")


@dataclass
class Sized:
    sizes: list[int] = field(default_factory=lambda: [8])
    """batch sizes"""


def test_the_items_of_a_list_of_numbers_are_numbers_from_the_command_line_and_from_a_preset():
    parser = cli.option_parser(Sized, "tool.py", "A tool.")
    assert cli.given_options(parser, Sized, ["--sizes", "1", "2_048"]) == {"sizes": [1, 2048]}
    assert cli.coerce("sizes", [4, 16], cli.option_types(Sized)["sizes"]) == [4, 16]
    with pytest.raises(cli.OptionError, match="option sizes: expected int, got 'x'"):
        cli.given_options(parser, Sized, ["--sizes", "8", "x"])


@pytest.mark.parametrize(
    "option, value, allowed, message",
    [
        ("hands", 0, cli.at_least(1), "--hands must be 1 or more, got 0 (hands to play)"),
        ("rate", 0.0, cli.above(0), "--rate must be greater than 0, got 0.0 (a rate)"),
        ("rate", float("nan"), cli.at_least(0), "--rate must be a finite number, got nan (a rate)"),
        ("rate", float("inf"), cli.above(0), "--rate must be a finite number, got inf (a rate)"),
        ("rate", 1.5, cli.between(0, 1), "--rate must be between 0 and 1, got 1.5 (a rate)"),
        ("rate", 0.0, cli.Range(0, 1, above=True), "--rate must be greater than 0 and at most 1, got 0.0 (a rate)"),
    ],
)
def test_a_number_outside_its_range_is_named_with_the_range_and_the_option_doc(option, value, allowed, message):
    options = Options(**{option: value})
    with pytest.raises(cli.OptionError) as refused:
        cli.check_ranges(options, {option: allowed})
    assert str(refused.value) == message
    cli.check_ranges(Options(hands=1, rate=1.0), {"hands": cli.at_least(1), "rate": cli.between(0, 1)})
    cli.check_ranges(Options(hands=None), {"hands": cli.at_least(1)})  # unset


def test_each_item_of_a_list_is_checked_against_the_range():
    cli.check_ranges(Sized([1, 64]), {"sizes": cli.at_least(1)})
    with pytest.raises(cli.OptionError, match=r"^--sizes must be 1 or more, got 0 \(batch sizes\)$"):
        cli.check_ranges(Sized([8, 0, 4]), {"sizes": cli.at_least(1)})


def test_a_bool_is_a_switch_or_takes_true_or_false_and_never_swallows_a_positional():
    assert given("--progress", "a", "b") == {"progress": True, "bots": ["a", "b"]}
    assert given("--progress", "false", "a") == {"progress": False, "bots": ["a"]}
    assert given("--no-progress") == given("--progress=False") == {"progress": False}
    with pytest.raises(cli.OptionError, match="option progress: expected bool, got 'maybe'"):
        given("--progress=maybe")
    assert evaluate.parse_args(["--overwrite", "heuristic", "random"]).bots == ["heuristic", "random"]


def test_rules_take_key_value_items_and_yaml_mappings_in_every_tool():
    assert cli.parse_rules(["deck=32", "{joker: true, target_points: 5}", "lone_lead=left_of_lone_player"]) == {
        "deck": 32, "joker": True, "target_points": 5, "lone_lead": "left_of_lone_player",
    }
    assert given("--rules", "deck=32", "joker=true", "--hands", "4") == {"rules": {"deck": 32, "joker": True}, "hands": 4}
    with pytest.raises(cli.OptionError, match="takes key=value items"):
        cli.parse_rules(["deck"])
    with pytest.raises(cli.OptionError, match="is not valid YAML"):
        cli.parse_rules(["{deck: 32"])
    args, _ = train_args(["--config", "configs/ppo_tiny.yaml", "--rules", "deck=32", "joker=true"])
    assert args.rules == {"deck": 32, "joker": True} == evaluate.parse_args(["a", "b", "--rules", "deck=32", "joker=true"]).rules
    assert check_game(args).rules.deck == 32


def test_layers_stack_and_merge_the_rules_key_by_key():
    merged = cli.layered({"hands": 1, "rules": {"deck": 32, "joker": True}}, {}, {"hands": 2, "rules": {"joker": False}})
    assert merged == {"hands": 2, "rules": {"deck": 32, "joker": False}}
    assert "rules" not in cli.layered({"hands": 1}, {"seed": 2})


def test_a_preset_is_checked_against_the_options(tmp_path):
    (tmp_path / "good.yaml").write_text("hands: 10\nrules: {deck: 32}\nprogress: false\n")
    assert cli.read_options(str(tmp_path / "good.yaml"), Options, "x.yaml") == {"hands": 10, "rules": {"deck": 32}, "progress": False}
    (tmp_path / "bad.yaml").write_text("hand: 10\n")
    with pytest.raises(cli.OptionError, match=r"unknown option\(s\) \['hand'\]"):
        cli.read_options(str(tmp_path / "bad.yaml"), Options, "x.yaml")
    with pytest.raises(cli.OptionError, match=r"\['out'\] can only be given on the command line"):
        (tmp_path / "out.yaml").write_text("out: here\n")
        cli.read_options(str(tmp_path / "out.yaml"), Options, "x.yaml", command_line_only=("out",))


def test_train_and_evaluate_options_are_all_documented():
    for cls in (evaluate.Args, TrainArgs):
        docs = cli.field_docs(cls)
        assert set(docs) == {f.name for f in dataclasses.fields(cls)} and all(docs.values())
