"""The command line's parser: every subcommand, its options' types, and usage errors on
one line with exit code 2."""
import argparse

import pytest

from jungleseg.cli._commands import COMMANDS
from jungleseg.cli._parser import build_parser


def test_every_subcommand_has_a_command_to_run():
    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert set(choices) == set(COMMANDS)


def test_options_parse_to_their_types():
    args = build_parser().parse_args(["segment", "m.h5", "a.png", "b.png", "--out", "seg",
                                      "--tile", "512", "--soft", "0.05",
                                      "--soft-epsilon", "0.1", "--quiet"])
    assert (args.command, args.model, args.inputs) == ("segment", "m.h5", ["a.png", "b.png"])
    assert (args.tile, args.soft, args.soft_epsilon, args.quiet) == (512, 0.05, 0.1, True)
    args = build_parser().parse_args(["train", "c.yaml", "--out", "m.h5", "--workers", "2",
                                      "--set", "jungle.max_width=64", "--set", "seed=1"])
    assert (args.workers, args.set) == (2, ["jungle.max_width=64", "seed=1"])


@pytest.mark.parametrize("argv", [["segment", "m.h5"], ["train", "c.yaml", "--out", "m.h5",
                                                        "--workers", "two"], ["nonsense"]])
def test_usage_errors_are_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("jungleseg: error: ")


def subparsers():
    parser = build_parser()
    return next(a for a in parser._actions if a.dest == "command").choices


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_argument_has_help_with_its_default_and_examples(name):
    parser = subparsers()[name]
    for action in parser._actions:
        if action.dest == "help":
            continue
        assert action.help, (name, action.dest)
        exits_at_once = action.default is argparse.SUPPRESS  # --list-presets, like --help
        if action.option_strings and not action.required and not exits_at_once:
            assert "default" in action.help, (name, action.dest)
    assert parser.epilog.startswith("examples:\n  jungleseg ")
    assert parser.format_help().rstrip().endswith(parser.epilog.splitlines()[-1].strip())
