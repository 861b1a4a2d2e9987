from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from serkit.cli import main
from serkit.fixtures import SENATE_SOURCE


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_table_shows_every_codec(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    headers = ["codec", "format", "library", "version", "impl", "untrusted", "available"]
    lines = out.splitlines()
    assert lines[0].split() == headers
    rows = {line.split()[0]: line.split() for line in lines[2 : 2 + 18]}
    assert len(rows) == 18 and "no:" not in out
    assert rows["pickle-p5"][5] == "UNSAFE" and rows["marshal"][5] == "UNSAFE"
    assert rows["yaml"][5] == "safe"
    assert "pickle-p0, pickle-p2, pickle-p4, pickle-p5: runs code" in out


def test_list_json_is_for_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 18
    assert set(rows[0]) >= {"id", "format", "library", "version", "implementation", "available"}
    assert all(row["available"] for row in rows)
    unsafe = {row["id"] for row in rows if not row["safe_for_untrusted_input"]}
    assert unsafe == {"pickle-p0", "pickle-p2", "pickle-p4", "pickle-p5", "marshal"}
    assert all(row["untrusted_input_hazard"] for row in rows if row["id"] in unsafe)


def test_fixtures_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fixtures", "list", "--json")
    rows = {row["id"]: row for row in json.loads(out)}
    assert code == 0
    assert rows["senate-bios"]["source"] == SENATE_SOURCE.url
    assert rows["random-dicts-100000"]["slow"] is True
    assert len(rows["small-dict"]["sha256"]) == 64


def test_sizes_json_reports_post_002_record(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "sizes", "--codec", "msgpack-ext,orjson", "--fixture", "sensor-record", "--json"
    )
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


def test_fixtures_verify_checks_source_and_hashes(
    capsys: pytest.CaptureFixture[str], senate_available: None
) -> None:
    code, out, _ = run(capsys, "fixtures", "verify", "--fixture", "small-dict,senate-bios")
    assert code == 0
    assert "ok    legislators-current.yaml" in out
    assert "ok    senate-bios" in out


def test_fixtures_fetch_from_mirror(
    capsys: pytest.CaptureFixture[str], isolated_data: Path, mirror_dir: Path
) -> None:
    code, out, _ = run(capsys, "fixtures", "fetch", "--mirror", str(mirror_dir))
    assert code == 0
    assert (isolated_data / SENATE_SOURCE.filename).is_file()
    assert "sha256 verified" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sizes", "--codec", "nope"], "unknown codec 'nope'"),
        (["sizes", "--fixture", "nope"], "unknown fixture 'nope'"),
        (["fixtures", "verify"], "run `serkit fixtures fetch`"),
        (["sizes", "--codec", "json"], "run `serkit fixtures fetch`"),
        (["fixtures", "fetch", "--mirror", "/nonexistent"], "is missing from mirror /nonexistent"),
    ],
)
def test_user_mistakes_get_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], isolated_data: Path, argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert err.startswith("serkit: error: ") and message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


def test_bad_arguments_exit_2_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2
    assert "usage: serkit" in capsys.readouterr().err


def test_console_script_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "serkit", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("serkit ")
