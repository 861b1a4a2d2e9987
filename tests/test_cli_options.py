"""The command line against its own declarations: the option table, the exit statuses, and
docs/cli.md, which is written from the parser."""

from __future__ import annotations

import argparse
import errno
from collections import defaultdict
from pathlib import Path

import pytest

from serkit.cli import build_parser, main
from serkit.cli.docs import PAGE, commands, page
from serkit.cli.options import OPTIONS, PRINTS_NO_RESULTS, Parser

ROOT = Path(__file__).resolve().parents[1]


def every_command() -> list[tuple[str, argparse.ArgumentParser]]:
    """Each command that runs (`fixtures add`, not `fixtures`), by its words."""
    found = [(" ".join(words), sub) for words, _, sub in commands(build_parser())]
    return [(name, sub) for name, sub in found if sub.get_default("run") is not None]


def options_of(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)
    ]


def test_every_command_is_read() -> None:
    names = [name for name, _ in every_command()]
    assert {"bench", "fixtures add", "results merge", "try", "power"} <= set(names)
    assert len(names) >= 22


@pytest.mark.parametrize(("command", "parser"), every_command(), ids=lambda x: str(x)[:20])
def test_a_table_option_means_what_the_table_says(
    command: str, parser: argparse.ArgumentParser
) -> None:
    for action in options_of(parser):
        option = OPTIONS.get(action.option_strings[-1])
        if option is None:
            continue
        where = f"{command} {option.name}"
        assert tuple(action.option_strings) == option.flags, where
        assert option.help in (action.help or "").replace("%%", "%"), where
        if option.action is not None:  # a switch
            assert action.nargs == 0, where
        else:
            assert action.type is option.type, where
            assert action.metavar == option.metavar, where
            assert tuple(action.choices or ()) == tuple(option.choices or ()), where


def test_an_option_outside_the_table_belongs_to_one_command() -> None:
    """An option two commands take is one meaning, declared once: in the table."""
    takers: dict[str, list[str]] = defaultdict(list)
    for command, parser in every_command():
        for action in options_of(parser):
            if action.option_strings[-1] not in OPTIONS:
                takers[action.option_strings[-1]].append(command)
    shared = {name: where for name, where in takers.items() if len(where) > 1}
    assert shared == {}


def test_every_option_in_the_table_is_taken_by_two_commands_or_more() -> None:
    counts = {name: 0 for name in OPTIONS}
    for _, parser in every_command():
        for action in options_of(parser):
            if action.option_strings[-1] in counts:
                counts[action.option_strings[-1]] += 1
    assert [name for name, n in counts.items() if n < 2] == []


def test_every_command_that_prints_results_takes_format() -> None:
    formats = {
        command: any("--format" in a.option_strings for a in options_of(parser))
        for command, parser in every_command()
    }
    assert set(PRINTS_NO_RESULTS) <= set(formats)
    assert [c for c, has in formats.items() if has == (c in PRINTS_NO_RESULTS)] == []


def test_the_json_alias_and_the_old_names_are_gone() -> None:
    gone = {"--json", "--output", "--memory-mib"}
    for command, parser in every_command():
        names = {flag for action in options_of(parser) for flag in action.option_strings}
        assert not names & gone, command
    conformance = dict(every_command())["conformance"]
    assert "--memory" not in {f for a in options_of(conformance) for f in a.option_strings}


def test_docs_cli_md_is_what_the_parser_says() -> None:
    """The lint session runs the same check (`python -m serkit.cli.docs --check`)."""
    written = (ROOT / PAGE).read_text(encoding="utf-8")
    assert written == page(), "run `python -m serkit.cli.docs --write`"


def test_the_page_names_every_command_and_option() -> None:
    text = page()
    for command, parser in every_command():
        assert f"serkit {command}\n" in text
        for action in options_of(parser):
            assert (
                f"`{action.option_strings[-1]}" in text or f", {action.option_strings[-1]}" in text
            )


# --- the exit statuses: one case each --------------------------------------------------


def status_of(argv: list[str]) -> int:
    """main's return, or argparse's SystemExit status: both are the process's exit status."""
    try:
        return main(argv)
    except SystemExit as stopped:
        return int(stopped.code or 0)


def test_exit_0_when_the_command_did_its_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert status_of(["list", "--format", "json"]) == 0


def test_exit_1_when_the_check_found_a_problem(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.trust import doctor

    found = [doctor.Item("governor", "powersave", "timings drift as the clock moves")]
    monkeypatch.setattr(doctor, "diagnose", lambda: found)
    assert status_of(["doctor"]) == 1
    assert "WARNING: timings drift" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["frobnicate"], "invalid choice"),  # argparse's own
        (["power", "--sizes", "3"], "argument --sizes: give percents"),  # a bad value
        (["try", "x.json", "--machine", "m"], "give --into DIR too"),  # options that clash
        (["bench", "--machine", "a", "--", "--machine", "b"], "--machine is given twice"),
    ],
    ids=["unknown command", "bad value", "options that clash", "a name given twice"],
)
def test_exit_2_on_usage(capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    assert status_of(argv) == 2
    assert says in capsys.readouterr().err


def test_exit_3_on_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert status_of(["sizes", "--codec", "nope"]) == 3  # serkit's refusal
    assert capsys.readouterr().err.startswith("serkit: error: unknown codec 'nope'")
    from serkit.cli import list as list_command

    def full(args: argparse.Namespace) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))

    monkeypatch.setattr(list_command, "run_list", full)  # the system's refusal
    assert status_of(["list"]) == 3
    assert "no space left on the device (ENOSPC)" in capsys.readouterr().err


def test_exit_130_when_interrupted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from serkit.cli import list as list_command

    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(list_command, "run_list", interrupted)
    assert status_of(["list"]) == 130
    assert capsys.readouterr().err == "serkit: interrupted\n"


def test_a_mistyped_option_names_the_nearest_right_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Not the top-level usage with no hint: one line naming the option meant, exit 2."""
    with pytest.raises(SystemExit) as exited:
        main(["try", "--rankby"])  # before the PATH it lacks: the typo is the mistake to name
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "serkit try: error: unknown option --rankby; did you mean --rank-by?\n"
    )


@pytest.mark.parametrize(("command", "parser"), every_command(), ids=lambda x: str(x)[:20])
def test_every_command_names_the_option_a_typo_meant(
    command: str, parser: argparse.ArgumentParser, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [f for a in options_of(parser) for f in a.option_strings if f.startswith("--")]
    flag = max(flags or ["--help"], key=len)
    typo = flag[:3] + flag[4:]  # its second letter left out
    with pytest.raises(SystemExit) as exited:
        main([*command.split(), f"{typo}=1"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == f"serkit {command}: error: unknown option {typo}; did you mean {flag}?\n"


def test_an_abbreviated_option_is_still_taken(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse takes a prefix of one option (`--rank` for `--rank-by`): no typo to name."""
    parsed = build_parser().parse_args(["try", "x.json", "--rank", "size"])
    assert parsed.rank_by == "size"


def test_an_option_only_loosely_like_one_is_not_named() -> None:
    """`serkit bench` passes asv's options on: `--factor` is not a mistyped `--matrix`."""
    bench = dict(every_command())["bench"]
    assert isinstance(bench, Parser)
    assert [bench.nearest_option(o) for o in ("--factor", "--steps", "--no-pull")] == [None] * 3
    assert bench.nearest_option("--matrx") == "--matrix"
