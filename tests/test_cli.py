from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from serkit import codec_names, get_codec, registry
from serkit.checks.fidelity import STATUSES
from serkit.cli import main
from serkit.inputs.fixtures import FIXTURES
from serkit.inputs.probes import PROBES, VALIDATION_PROBES, probe_names
from serkit.inputs.sources import SENATE_SOURCE


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_table_shows_every_codec(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    headers = ["codec", "format", "library", "version", "impl", "schema", "untrusted"]
    lines = out.splitlines()
    assert lines[0].split() == [*headers, "available"]
    count = len(codec_names())
    assert count == 27
    rows = {line.split()[0]: line.split() for line in lines[2 : 2 + count]}
    assert list(rows) == codec_names() and "no:" not in out
    untrusted, schema = headers.index("untrusted"), headers.index("schema")
    assert rows["pickle-p5"][untrusted] == "UNSAFE" and rows["marshal"][untrusted] == "UNSAFE"
    assert rows["yaml"][untrusted] == "safe" and rows["yaml"][schema] == "-"
    assert rows["pydantic-json"][schema] == "derived"
    assert "pickle-p0, pickle-p2, pickle-p4, pickle-p5: runs code" in out


def test_list_json_is_for_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and [row["id"] for row in rows] == codec_names() and len(rows) == 27
    assert set(rows[0]) >= {"id", "format", "library", "version", "implementation", "available"}
    by_id = {row["id"]: row for row in rows}
    assert by_id["json"]["schema"] is None and by_id["json"]["fixtures"] is None
    assert by_id["protobuf"]["schema"] == "derived" and by_id["protobuf"]["fixtures"] == ["twitter"]
    assert all(row["available"] for row in rows)
    unsafe = {row["id"] for row in rows if not row["safe_for_untrusted_input"]}
    assert unsafe == {"pickle-p0", "pickle-p2", "pickle-p4", "pickle-p5", "marshal"}
    assert all(row["untrusted_input_hazard"] for row in rows if row["id"] in unsafe)


def test_fixtures_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fixtures", "list", "--format", "json")
    rows = {row["id"]: row for row in json.loads(out)}
    assert code == 0
    assert rows["senate-bios"]["source"] == SENATE_SOURCE.url
    assert rows["random-dicts-100000"]["slow"] is True
    assert len(rows["small-dict"]["sha256"]) == 64


def test_sizes_json_reports_post_002_record(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "sizes", "--codec", "msgpack-ext,orjson", "--fixture", "sensor-record",
        "--format", "json",
    )  # fmt: skip
    rows = {row["codec"]: row for row in json.loads(out)}
    assert code == 0
    assert rows["msgpack-ext"] == {
        "codec": "msgpack-ext",
        "fixture": "sensor-record",
        "status": "exact",
        "bytes": 64,
        "options": "",
        "detail": "",
    }
    assert rows["orjson"]["status"] == "unsupported" and rows["orjson"]["bytes"] is None


def test_sizes_table_has_units_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "sizes", "--codec", "json,orjson", "--fixture", "random-dicts-10")
    assert code == 0
    assert "bytes (B)" in out
    assert "32,216*" in out  # json turns the int keys into str: flagged lossy
    assert "orjson: option=OPT_NON_STR_KEYS (random-dicts-10)" in out


@pytest.mark.slow
def test_fixtures_verify_checks_source_and_hashes(
    capsys: pytest.CaptureFixture[str], senate_available: None
) -> None:
    code, out, _ = run(capsys, "fixtures", "verify", "--fixture", "small-dict,senate-bios")
    assert code == 0
    assert "ok    legislators-current.yaml" in out
    assert "ok    senate-bios" in out


@pytest.mark.slow
def test_fixtures_fetch_from_mirror(
    capsys: pytest.CaptureFixture[str], isolated_data: Path, mirror_dir: Path
) -> None:
    code, out, _ = run(capsys, "fixtures", "fetch", "--mirror", str(mirror_dir))
    assert code == 0
    assert (isolated_data / SENATE_SOURCE.filename).is_file()
    assert (isolated_data / "corpora" / "github.json.xz").is_file()
    assert len(list((isolated_data / "JSONTestSuite" / "test_parsing").iterdir())) == 318
    assert "sha256 verified" in out
    code, out, _ = run(capsys, "fixtures", "verify")  # now from the data dir alone
    assert code == 0 and "ok    JSONTestSuite test_parsing (318 files" in out
    assert "ok    canada" in out  # slow for the grid, quick to verify


# --- serkit conformance ------------------------------------------------------------------


def test_conformance_names_what_each_codec_gets_wrong_and_saves_the_matrix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from serkit.checks.conformance_document import load

    saved = tmp_path / "conformance.json"
    code, out, err = run(
        capsys, "conformance", "--codec", "json,orjson", "--save", str(saved), "--timeout", "10"
    )
    assert code == 1, err  # json accepts invalid files: the check found a problem
    lines = out.splitlines()
    rows = {line.split()[0]: line for line in lines[3:5]}  # under the title, headers and rule
    assert "95/95" in rows["json"] and "185/188" in rows["json"]
    assert rows["json"].endswith("accepts 3 invalid") and rows["orjson"].endswith("conforms")
    assert (
        "json accepts 3 invalid: n_number_NaN.json, n_number_infinity.json, "
        "n_number_minus_infinity.json" in out
    )
    assert "n_number_NaN.json" in out and "accepted *" in out  # the matrix marks it
    assert "capped at 1.00 GiB of address space, 10.0 s per file" in out
    doc, results = load(saved)
    assert doc["suite"]["files"] == 318 and doc["limits"]["timeout_s"] == 10
    assert list(results) == ["json", "orjson"] and len(results["orjson"].files) == 318


# --- serkit fidelity ---------------------------------------------------------------------


@pytest.mark.slow  # every codec on every fixture and probe
def test_fidelity_json_has_a_status_for_every_codec_fixture_and_probe(
    capsys: pytest.CaptureFixture[str], senate_available: None
) -> None:
    from serkit.checks.fidelity import default_documents

    probes = [*probe_names(), *VALIDATION_PROBES]
    # A bare `serkit fidelity` checks these: not the slow fixtures, nor one post's document.
    defaults = [f.name for f in FIXTURES.values() if not (f.slow or f.named_only)] + probes
    assert "file-tree" in FIXTURES and "file-tree" not in defaults
    assert default_documents() == defaults
    # The shape of the output, on every codec and probe; the largest fixtures, whose pure-
    # Python YAML round trips take a minute, are checked pair by pair in test_fixtures.
    large = {"random-dicts-1000", "twitter", "github"}
    fixtures = [name for name in defaults if name in FIXTURES and name not in large]
    code, out, _ = run(
        capsys, "fidelity", "--format", "json", "--fixture", ",".join(fixtures), "--probes"
    )
    data = json.loads(out)
    cells = {(c["codec"], c["fixture"]): c for c in data["cells"]}
    documents = fixtures + probes
    # Some schema codecs cannot decode their own output of nan-infinity: a problem, exit 1.
    assert cells["msgspec-struct-json", "nan-infinity"]["status"] == "error"
    assert code == 1
    assert len(data["cells"]) == len(cells)
    assert set(cells) == {(c, d) for c in codec_names() for d in documents}
    kinds = {**dict.fromkeys(fixtures, "fixture"), **dict.fromkeys(PROBES, "probe")}
    kinds.update(dict.fromkeys(VALIDATION_PROBES, "validation"))
    for cell in cells.values():
        assert cell["status"] in STATUSES
        # A validation probe's "accepted, changed" lists what changed, as a lossy trip does.
        changed = cell["status"] in ("lossy", "accepted, changed")
        assert changed == bool(cell["differences"]), cell
        assert cell["implementation"] == "c" or registry.spec(cell["codec"]).pure_python
        assert cell["version"] == get_codec(cell["codec"]).version
        assert cell["kind"] == kinds[cell["fixture"]]
        # A schema codec's round trip is compared as plain data, and names its schema.
        if registry.spec(cell["codec"]).needs_schema and cell["status"] in ("exact", "lossy"):
            assert cell["compared"] and len(cell["schema_sha256"]) == 64, cell
    assert cells["json", "random-dicts-10"]["differences"] == [
        {"kind": "int-key->str", "count": 1000, "example_path": "[0]['dict'][0]"}
    ]
    assert cells["yaml", "int-keys"]["status"] == "exact"  # YAML keeps int keys
    assert cells["msgpack-ext", "sensor-record"]["status"] == "exact"  # and the classes
    assert cells["msgpack", "sensor-record"]["differences"][0]["kind"] == "namedtuple->list"
    assert cells["orjson", "sensor-record"]["status"] == "unsupported"
    for pickle in ("pickle-p0", "pickle-p2", "pickle-p4", "pickle-p5"):
        assert all(cells[pickle, d]["status"] == "exact" for d in fixtures + probe_names())
        # No schema to check: a document that breaks one comes back as it went in.
        assert all(cells[pickle, d]["status"] == "passed through" for d in VALIDATION_PROBES)
    assert cells["msgspec-struct-json", "schema-wrong-type"]["status"] == "rejected"
    codecs = {c["codec"]: c for c in data["codecs"]}
    assert list(codecs) == codec_names()
    assert codecs["marshal"]["safe_for_untrusted_input"] is False
    assert codecs["json"]["safe_for_untrusted_input"] is True
    assert codecs["json"]["hostile"] is None  # only with --hostile


def test_fidelity_table_has_short_cells_and_a_legend(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "fidelity", "--codec", "json,yaml,pickle-p5", "--fixture", "int-keys,small-dict"
    )
    lines = out.splitlines()
    assert code == 0
    assert lines[1].split() == ["codec", "untrusted", "int-keys", "small-dict"]
    rows = {line.split()[0]: line for line in lines[3:6]}
    assert rows["json"].split(None, 2)[1:] == ["safe", "lossy: int-key->str  exact"]
    assert rows["yaml"].split()[1:] == ["safe", "exact", "exact"]
    assert rows["pickle-p5"].split()[1:] == ["UNSAFE", "exact", "exact"]
    assert "    int-key->str: an int dict key came back as str" in lines
    assert any(line.startswith("    pickle-p5: runs code") for line in lines)


def test_fidelity_chooses_fixtures_and_probes(capsys: pytest.CaptureFixture[str]) -> None:
    def documents(*argv: str) -> list[str]:
        code, out, _ = run(capsys, "fidelity", "--codec", "json", "--format", "json", *argv)
        assert code == 0
        return [cell["fixture"] for cell in json.loads(out)["cells"]]

    assert documents("--fixture", "small-dict,int-keys") == ["small-dict", "int-keys"]
    probes = [*probe_names(), *VALIDATION_PROBES]
    assert documents("--fixture", "small-dict", "--probes") == ["small-dict", *probes]
    assert documents("--no-probes", "--fixture", "small-dict") == ["small-dict"]


def test_fidelity_hostile_adds_a_column_and_an_object_per_codec(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["fidelity", "--codec", "json,pickle-p2", "--fixture", "int-keys", "--hostile"]
    code, out, _ = run(capsys, *argv, "--hostile-count", "150", "--format", "json")
    hostile = {c["codec"]: c["hostile"] for c in json.loads(out)["codecs"]}
    assert code == 0
    for result in hostile.values():
        assert result["status"] == "fed" and result["fed"] == result["requested"] == 150
        assert set(result["outcomes"]) == {"exception", "value", "blocked", "hang", "crash"}
        assert sum(result["outcomes"].values()) == 150
        assert result["outcomes"]["crash"] == result["outcomes"]["hang"] == 0
        assert sum(result["exception_classes"].values()) == result["outcomes"]["exception"]
    assert "json.decoder.JSONDecodeError" in hostile["json"]["exception_classes"]
    assert "_pickle.UnpicklingError" in hostile["pickle-p2"]["exception_classes"]

    code, out, _ = run(capsys, *argv, "--hostile-count", "150")
    lines = out.splitlines()
    assert lines[1].split() == ["codec", "untrusted", "hostile", "int-keys"]
    json_row = next(line for line in lines if line.startswith("json "))
    raised = hostile["json"]["outcomes"]["exception"]
    assert f"{raised} raised, {150 - raised} returned" in json_row
    assert any(line.startswith("hostile: 150 truncated, bit-flipped") for line in lines)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fidelity", "--codec", "json,nope"], "unknown codec 'nope'"),
        (["fidelity", "--fixture", "int-keys,nope"], "unknown fixture or probe 'nope'"),
        (["fidelity", "--codec", "json"], "run `serkit fixtures fetch`"),
        (["sizes", "--codec", "nope"], "unknown codec 'nope'"),
        (["sizes", "--fixture", "nope"], "unknown fixture 'nope'"),
        (["fixtures", "verify"], "run `serkit fixtures fetch`"),
        (["sizes", "--codec", "json"], "run `serkit fixtures fetch`"),
        (["fixtures", "fetch", "--mirror", "/nonexistent"], "is missing from mirror /nonexistent"),
        (["conformance", "--codec", "json,msgpack"], "JSON codecs only (msgpack is msgpack)"),
        (["conformance", "--codec", "json"], "run `serkit fixtures fetch`"),
    ],
)
def test_user_mistakes_get_one_line_and_exit_3(
    capsys: pytest.CaptureFixture[str], isolated_data: Path, argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 3
    assert err.startswith("serkit: error: ") and message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


@pytest.mark.parametrize(
    "argv",
    [
        ["frobnicate"],
        ["fidelity", "--format", "xml"],
        ["fidelity", "--hostile-count", "0"],
        ["conformance", "--memory-limit", "0"],
        ["conformance", "--timeout", "0"],
        ["power", "--sizes", "3"],
        ["list", "--json"],  # the alias of --format json, gone before 0.1.0 was released
    ],
)
def test_bad_arguments_exit_2_with_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: serkit" in capsys.readouterr().err


@pytest.mark.slow
def test_console_script_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "serkit", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("serkit ")


# --- one convention: --format table|json|markdown, positive counts --------------------------

# Cheap runs of every command that prints results; the asv-driven ones are faked below.
PRINTING = [
    ["list"],
    ["fixtures", "list"],
    ["sizes", "--codec", "json,orjson", "--fixture", "small-dict"],
    ["fidelity", "--codec", "json", "--fixture", "int-keys", "--no-probes"],
    ["matrix"],
    ["doctor"],
    ["replicate", "002", "--rounds", "3", "--no-save"],
    ["conformance", "--codec", "orjson", "--no-save"],
]


def ok(argv: list[str], code: int) -> bool:
    """0, or for doctor 1 too: it exits 1 when this machine's state earns a warning."""
    return code == 0 or (argv[0] == "doctor" and code == 1)


def assert_github_table(out: str) -> None:
    """At least one GitHub-flavoured table: a header row, a |---| rule, rows; all aligned."""
    lines = out.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("|--")]
    assert rules, out
    for i in rules:
        header = lines[i - 1]
        assert header.startswith("| ") and header.endswith(" |")
        assert lines[i + 1].startswith("| ")
        table = []
        for line in lines[i - 1 :]:
            if not line.startswith("|"):
                break
            table.append(line)
        assert len({line.count("|") for line in table}) == 1, table


@pytest.fixture
def fake_asv(monkeypatch: pytest.MonkeyPatch) -> None:
    """agreement, validate and overhead, measured by canned numbers instead of asv runs."""
    from serkit.trust import agreement, overhead

    def measure(root: Path, codec: str, fixture: str, operation: str, rounds: int) -> Any:
        return agreement.Agreement(codec, fixture, operation, [1.0e-6] * rounds, [1.02e-6] * rounds)

    def validate(root: Path, pairs: Any, rounds: int, processes: int) -> Any:
        times = [2e-6] * rounds
        harness = agreement.PYPERF
        return [
            agreement.Agreement(p.codec, p.fixture, p.operation, times, times, harness)
            for p in pairs
        ]

    def overhead_measure(root: Path, codecs: Any, rounds: int) -> Any:
        adapter, direct = (1.01e-6,) * rounds, (1e-6,) * rounds
        return [overhead.Overhead(c, "dumps", adapter, direct) for c in codecs]

    monkeypatch.setattr(agreement, "measure_agreement", measure)
    monkeypatch.setattr(agreement, "validate", validate)
    monkeypatch.setattr(overhead, "measure_overheads", overhead_measure)


FAKED = [
    ["agreement", "--rounds", "2"],
    ["validate", "--rounds", "2", "--processes", "1"],
    ["overhead", "--codec", "json,orjson", "--rounds", "2"],
]


def results_argv(tmp_path: Path, command: str) -> list[str]:
    from results_factory import two_hosts

    root = str(two_hosts(tmp_path))
    return [command, "--results", root] + (["a", "b"] if command == "compare" else [])


@pytest.mark.parametrize("argv", PRINTING + FAKED, ids=" ".join)
def test_markdown_is_a_github_table(
    capsys: pytest.CaptureFixture[str], fake_asv: None, argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv, "--format", "markdown")
    assert ok(argv, code), err
    assert_github_table(out)


@pytest.mark.parametrize("command", ["compare", "hosts"])
def test_markdown_of_results(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    code, out, err = run(capsys, *results_argv(tmp_path, command), "--format", "markdown")
    assert code == 0, err
    assert_github_table(out)


@pytest.mark.parametrize("argv", PRINTING + FAKED, ids=" ".join)
def test_json_is_one_document_on_stdout(
    capsys: pytest.CaptureFixture[str], fake_asv: None, argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv, "--format", "json")
    assert ok(argv, code), err
    assert json.loads(out) is not None


@pytest.mark.parametrize("command", ["compare", "hosts"])
def test_json_of_results(capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    argv = results_argv(tmp_path, command)
    code, out, _ = run(capsys, *argv, "--format", "json")
    assert code == 0
    document = json.loads(out)
    code, out, _ = run(capsys, *argv, "--format", "json")
    assert code == 0 and json.loads(out) == document


def test_validate_json_keeps_its_document(
    capsys: pytest.CaptureFixture[str], fake_asv: None
) -> None:
    code, out, _ = run(capsys, "validate", "--rounds", "2", "--processes", "1", "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert list(document) == ["rounds", "processes", "load_average", "pairs"]
    assert document["rounds"] == 2 and document["processes"] == 1
    assert set(document["load_average"]) == {"before", "after"}
    assert all(pair["within"] and pair["harness"] == "pyperf" for pair in document["pairs"])


@pytest.mark.parametrize(
    "argv",
    [
        ["agreement", "--rounds", "0"],
        ["validate", "--rounds", "0"],
        ["validate", "--processes", "0"],
        ["overhead", "--rounds", "0"],
        ["replicate", "--rounds", "0"],
        ["fidelity", "--hostile-count", "0"],
        ["agreement", "--rounds", "two"],
    ],
    ids=" ".join,
)
def test_a_count_of_zero_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    # argparse names the subcommand: `serkit agreement: error: argument --rounds: ...`
    errors = [line for line in err.splitlines() if line.startswith(f"serkit {argv[0]}: error:")]
    assert info.value.code == 2
    assert len(errors) == 1 and f"argument {argv[1]}: must be a " in errors[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_any_command_even_when_inherited_ignored(
    signum: int, status: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A background job inherits SIGINT ignored; serkit owns it from its first line anyway."""

    def signalled(args: argparse.Namespace) -> int:
        os.kill(os.getpid(), signum)  # handled in this thread before the next line runs
        return 0

    def parser() -> argparse.ArgumentParser:
        made = argparse.ArgumentParser(prog="serkit")
        made.set_defaults(run=signalled)
        return made

    monkeypatch.setattr("serkit.cli.build_parser", parser)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = main([])
        given_back = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == status
    assert given_back is signal.SIG_IGN  # the caller's own handling, restored
    (line,) = capsys.readouterr().err.splitlines()
    assert line in ("serkit: interrupted", "serkit: stopped by SIGTERM")


def _every_command(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Each command's words, subcommands included (`fixtures add`, `store ...`)."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _every_command(sub, (*path, name))
    return found


def test_every_commands_help_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """Help texts are built from prose with percentages, which argparse reads as formats."""
    from serkit.cli import build_parser

    commands = _every_command(build_parser())
    assert ("bench",) in commands and ("fixtures", "add") in commands
    for words in commands:
        with pytest.raises(SystemExit) as stopped:
            main([*words, "--help"])
        out = capsys.readouterr().out
        assert stopped.value.code == 0 and out.startswith("usage: serkit"), words


@pytest.mark.slow
def test_after_a_run_the_console_names_only_its_own_host_without_a_noise_floor(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same warnings about unrelated hosts printed after every command; the report's
    pages still name every host."""
    from results_factory import serkit_tree

    from serkit.cli.report import write_report

    tree = serkit_tree(tmp_path / "results", machines=("box-a", "box-b", "box-c"))
    write_report(
        Path(__file__).resolve().parents[1],
        tree,
        tmp_path / "reports",
        with_asv=False,
        hosts=["box-a"],
    )
    err = capsys.readouterr().err
    assert err.count("box-a has no noise measurement") == 1
    assert "box-b has" not in err and "box-c has" not in err
    assert "2 other hosts in the results have no noise measurement" in err
    write_report(
        Path(__file__).resolve().parents[1], tree, tmp_path / "reports", with_asv=False
    )  # `serkit report`: all
    err = capsys.readouterr().err
    assert all(err.count(f"box-{x} has no noise measurement") == 1 for x in "abc")


def test_every_command_has_a_description() -> None:
    """12 of 20 commands printed only their usage and options under --help."""
    import argparse

    from serkit.cli import build_parser

    def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[Any]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append(((*path, name), sub))
                    found += parsers(sub, (*path, name))
        return found

    every = parsers(build_parser(), ())
    assert len(every) >= 20
    lacking = [" ".join(words) for words, sub in every if len(sub.description or "") < 40]
    assert lacking == []
