from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from misbehaving_codec import ABORT, HANG, SEGFAULT, misbehaviour, valid_json

import serkit
from serkit.checks.conformance import (
    ACCEPTED,
    CRASHED,
    HUNG,
    RAN,
    REJECTED,
    FileOutcome,
    json_codecs,
    run_codec,
    run_conformance,
)
from serkit.checks.workers import ERROR, NOT_INSTALLED
from serkit.errors import FixtureSourceError
from serkit.inputs import jsontestsuite
from serkit.inputs.jsontestsuite import ACCEPT, EITHER, REJECT, expectation

SIX = ["json", "msgspec-json", "orjson", "rapidjson", "simplejson", "ujson"]


@pytest.fixture(scope="session")
def suite() -> dict[str, Path]:
    """Every test file, verified: from the mirror, or as `serkit fixtures fetch` left them."""
    try:
        return jsontestsuite.verified_files()
    except FixtureSourceError as exc:
        pytest.fail(f"{exc} (or set SERKIT_FIXTURE_MIRROR)")


def _some(suite: dict[str, Path], *names: str) -> dict[str, Path]:
    return {name: suite[name] for name in names}


# --- the pinned files --------------------------------------------------------------------


def test_the_pinned_manifest_lists_the_whole_suite() -> None:
    sources = jsontestsuite.sources()
    assert len(sources) == 318
    kinds = [expectation(s.filename) for s in sources]
    assert (kinds.count(ACCEPT), kinds.count(REJECT), kinds.count(EITHER)) == (95, 188, 35)
    assert all(len(s.sha256) == 64 for s in sources)
    # A name with '#' or '+' must still download: the URL quotes it, at the pinned commit.
    trailing = next(s for s in sources if s.filename == "n_structure_trailing_#.json")
    assert trailing.url.endswith(
        "/1ef36fa01286573e846ac449e8683f8833c5b26a/test_parsing/n_structure_trailing_%23.json"
    )


def test_the_mirror_manifest_matches_the_pinned_one(suite: dict[str, Path]) -> None:
    mirror_manifest = next(iter(suite.values())).parents[1] / "MANIFEST.sha256"
    if not mirror_manifest.is_file():
        pytest.skip("the files were fetched, not mirrored: no MANIFEST.sha256 beside them")
    pinned = jsontestsuite.read_manifest(jsontestsuite.MANIFEST.read_text())
    assert jsontestsuite.read_manifest(mirror_manifest.read_text()) == pinned
    assert sorted(suite) == sorted(pinned)


def test_a_changed_or_missing_file_is_refused(suite: dict[str, Path], tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    shutil.copytree(next(iter(suite.values())).parent, mirror / jsontestsuite.FOLDER)
    assert len(jsontestsuite.verified_files(mirror=str(mirror))) == 318
    changed = mirror / jsontestsuite.FOLDER / "y_array_empty.json"
    changed.write_bytes(b"[1]")
    with pytest.raises(FixtureSourceError, match=r"y_array_empty\.json fails its sha256 check"):
        jsontestsuite.verified_files(mirror=str(mirror))
    changed.unlink()
    with pytest.raises(FixtureSourceError, match=r"y_array_empty\.json is missing"):
        jsontestsuite.verified_files(mirror=str(mirror))


def test_fetch_copies_every_file_from_the_mirror(
    suite: dict[str, Path], isolated_data: Path, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    shutil.copytree(next(iter(suite.values())).parent, mirror / jsontestsuite.FOLDER)
    folder = jsontestsuite.fetch(mirror=str(mirror))
    assert folder == isolated_data / jsontestsuite.FOLDER
    assert jsontestsuite.verified_files() == {
        name: folder / name for name in jsontestsuite.verified_files(mirror=str(mirror))
    }


# --- real codecs -------------------------------------------------------------------------


def test_the_json_codecs_come_from_the_registry() -> None:
    names = json_codecs()
    assert set(SIX) <= set(names)
    assert all(serkit.get_codec(n).format == "json" for n in SIX)
    assert "msgpack" not in names


def test_real_files_are_classified(suite: dict[str, Path]) -> None:
    files = _some(
        suite,
        "y_array_empty.json",
        "y_string_unicode_U+FFFE_nonchar.json",
        "n_array_extra_comma.json",
        "n_number_NaN.json",  # the standard library reads NaN; orjson does not
        "n_structure_100000_opening_arrays.json",  # too deep: refused, never a crash
        "i_number_huge_exp.json",  # a float overflow: orjson refuses it, json gives inf
    )
    results = run_conformance(files, ["json", "orjson"], jobs=2)
    outcomes = {c: {r.file: r.outcome for r in results[c].files} for c in results}
    assert outcomes["json"] == {
        "y_array_empty.json": ACCEPTED,
        "y_string_unicode_U+FFFE_nonchar.json": ACCEPTED,
        "n_array_extra_comma.json": REJECTED,
        "n_number_NaN.json": ACCEPTED,
        "n_structure_100000_opening_arrays.json": REJECTED,
        "i_number_huge_exp.json": ACCEPTED,
    }
    assert outcomes["orjson"] == {
        **outcomes["json"],
        **dict.fromkeys(["n_number_NaN.json", "i_number_huge_exp.json"], REJECTED),
    }
    json_result, orjson_result = results["json"], results["orjson"]
    assert json_result.status == RAN and json_result.implementation == "c"
    assert json_result.accepts_invalid() == ["n_number_NaN.json"]
    assert json_result.rejects_valid() == [] and not json_result.conforms
    assert orjson_result.conforms and orjson_result.accepts_invalid() == []
    deep = next(r for r in json_result.files if r.file.startswith("n_structure_100000"))
    assert deep.detail == "RecursionError"
    counts = orjson_result.counts()
    assert counts[ACCEPT][ACCEPTED] == 2 and counts[REJECT][REJECTED] == 3
    assert counts[EITHER] == {ACCEPTED: 0, REJECTED: 1, CRASHED: 0, HUNG: 0}
    assert orjson_result.as_dict()["counts"] == counts


@pytest.mark.slow
def test_the_whole_matrix_takes_seconds(suite: dict[str, Path]) -> None:
    results = run_conformance(suite, SIX, jobs=2)
    for result in results.values():
        assert result.status == RAN, result.detail
        assert len(result.files) == 318
        assert result.incidents() == [], result.codec
        assert result.rejects_valid() == [], result.codec
        assert result.seconds < 30, result.codec  # about 1 s each here, unloaded
    # Measured with the pinned versions and kept here so a change is seen, not assumed.
    assert results["orjson"].conforms and results["msgspec-json"].conforms
    assert {"n_number_NaN.json", "n_number_infinity.json"} <= set(results["json"].accepts_invalid())


def test_an_expected_outcome_is_judged_by_the_prefix() -> None:
    assert FileOutcome("y_x.json", ACCEPT, ACCEPTED).conforms
    assert not FileOutcome("y_x.json", ACCEPT, REJECTED).conforms
    assert FileOutcome("n_x.json", REJECT, REJECTED).conforms
    assert not FileOutcome("n_x.json", REJECT, ACCEPTED).conforms
    assert FileOutcome("i_x.json", EITHER, REJECTED).conforms
    assert not FileOutcome("i_x.json", EITHER, CRASHED).conforms
    assert not FileOutcome("n_x.json", REJECT, HUNG).conforms
    with pytest.raises(ValueError, match="not a JSONTestSuite"):
        expectation("x_file.json")


# --- a codec that crashes and hangs ------------------------------------------------------


@pytest.mark.slow
def test_a_crash_or_hang_is_pinned_on_its_file_and_the_run_goes_on(
    misbehaving_codec: serkit.Codec, suite: dict[str, Path]
) -> None:
    """Each failure comes after files that must still be classified by a fresh worker."""
    by_action: dict[str, list[str]] = {}
    for name, path in suite.items():
        data = path.read_bytes()
        if name.startswith("n_") and not valid_json(data):
            by_action.setdefault(misbehaviour(data), []).append(name)
    chosen = [
        "y_array_empty.json",
        by_action[ABORT][0],
        by_action["raise"][0],
        by_action[SEGFAULT][0],
        "y_object_basic.json",
        by_action[HANG][0],
        by_action["raise"][1],
        "n_number_NaN.json",  # the stdlib reads it, so the test codec does too
    ]
    result = run_codec("misbehaving", _some(suite, *chosen), timeout=1.0)

    assert result.status == RAN and [r.file for r in result.files] == chosen
    got = {r.file: (r.outcome, r.detail) for r in result.files}
    assert got == {
        "y_array_empty.json": (ACCEPTED, "list"),
        by_action[ABORT][0]: (CRASHED, "SIGABRT"),
        by_action["raise"][0]: (REJECTED, "ValueError"),
        by_action[SEGFAULT][0]: (CRASHED, "SIGSEGV"),
        "y_object_basic.json": (ACCEPTED, "dict"),
        by_action[HANG][0]: (HUNG, "no answer in 1 s"),
        by_action["raise"][1]: (REJECTED, "ValueError"),
        "n_number_NaN.json": (ACCEPTED, "list"),  # [NaN]
    }
    assert [r.file for r in result.incidents()] == [
        by_action[ABORT][0],
        by_action[SEGFAULT][0],
        by_action[HANG][0],
    ]
    assert result.accepts_invalid() == ["n_number_NaN.json"] and not result.conforms


def test_an_unknown_codec_is_an_error(suite: dict[str, Path]) -> None:
    result = run_codec("no-such-codec", _some(suite, "y_array_empty.json"))
    assert result.status == ERROR and "unknown codec" in result.detail
    assert result.files == []


def test_not_installed_is_its_own_status(suite: dict[str, Path], ghost_codec: str) -> None:
    result = run_codec(ghost_codec, _some(suite, "y_array_empty.json"))
    assert result.status == NOT_INSTALLED and "pip install ghost-lib" in result.detail


@pytest.mark.slow
def test_the_worker_writes_one_line_per_file(suite: dict[str, Path]) -> None:
    files = _some(suite, "y_array_empty.json", "n_array_extra_comma.json")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "serkit.checks.conformance",
            "--codec",
            "json",
            "--",
            *map(str, files.values()),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ready\t") and lines[0].endswith("\tc")
    assert lines[1:] == ["0\taccepted\tlist", "1\trejected\tjson.decoder.JSONDecodeError"]
