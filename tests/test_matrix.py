"""serkit/run/matrix.py: the environments, generated from releases.json."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from serkit.cli import main
from serkit.codecs.registry import STDLIB, codec_names, registry
from serkit.run.libraries import companions
from serkit.run.matrix import (
    COUNTS_PYTHON,
    LIBRARY_ENV,
    MatrixEnvironment,
    asv_config,
    configured,
    counted,
    environments,
    measured,
    newest_set,
    render_asv_config,
)
from serkit.run.releases import Library, Release, Releases, load
from serkit.schemas.derive import INFERENCE_LIBRARY

ROOT = Path(__file__).resolve().parents[1]
EVERYWHERE = ("linux-x86_64", "linux-aarch64", "macos-arm64")


def _release(version: str, pythons: tuple[str, ...], platforms: tuple[str, ...] = EVERYWHERE):
    return Release(version, None, {p: pythons for p in platforms})


# A small matrix, made up: what the tests below check does not hang on today's releases.
MADE_UP = Releases(
    pythons=("3.12", "3.13", "3.14t"),
    minor_lines=3,
    libraries=(
        Library(
            "orjson",
            (_release("3.13.0", ("3.12", "3.13")), _release("3.12.0", ("3.12", "3.13"))),
        ),
        Library(
            "cbor2",
            (
                _release("6.2.1", ("3.12", "3.13", "3.14t")),
                _release("5.9.0", ("3.12",)),
                # arm64 macOS only: a release whose wheels the other runner kinds lack.
                _release("5.6.5", ("3.12",), ("macos-arm64",)),
            ),
        ),
        # orjson's schema codec (orjson-dataclass) needs the schema inference beside it.
        Library(INFERENCE_LIBRARY, (_release("1.4.0", ("3.12", "3.13", "3.14t")),)),
    ),
    checked="2026-11-25",
)


def test_asv_conf_json_is_generated_from_the_releases_file() -> None:
    assert (ROOT / "asv.conf.json").read_text() == render_asv_config(), (
        "asv.conf.json is stale: run `serkit matrix --write-config asv.conf.json`"
    )


@pytest.mark.slow
def test_asv_reads_the_config_and_names_environments_as_serkit_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from asv import environment
    from asv.config import Config
    from asv.plugin_manager import plugin_manager
    from asv.plugins.virtualenv import Virtualenv

    from serkit.run.asv_env import OneCallVirtualenv
    from serkit.run.interpreters import expose, find_pythons

    found = find_pythons(load().pythons)
    env = expose(found, tmp_path / "pythons")
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.chdir(ROOT)  # asv imports a ".module" plugin from the current folder
    conf = Config.load(str(ROOT / "asv.conf.json"))
    for plugin in conf.plugins:  # as every asv command does before it runs
        plugin_manager.import_plugin(plugin)
    built = list(environment.get_environments(conf, None, verbose=False))
    assert {type(e) for e in built} == {OneCallVirtualenv}
    present = {p for p, exe in found.items() if exe is not None}
    # serkit's names are asv's virtualenv names: results on disk keep their meaning.
    assert [e.name for e in built] == [e.asv_name for e in configured() if e.python in present]
    # ... and so are the folders, which a rebuild then replaces instead of doubling.
    first = built[0]
    plain = Virtualenv(conf, first._python, first._requirements, first._tagged_env_vars)
    assert (first.name, first.dir_name) == (plain.name, plain.dir_name)


def test_each_matrix_environment_installs_one_library_and_measures_it() -> None:
    for env in environments(data=MADE_UP):
        if env.library == STDLIB:
            assert env.requirements == {}
        else:
            assert set(env.requirements) == {env.library, *companions(str(env.library))}
        assert env.as_include()["env_nobuild"] == {LIBRARY_ENV: env.library}
    # orjson's codecs include a schema codec: genson beside it, never measured there.
    (orjson,) = [e for e in environments(("3.12",), data=MADE_UP) if e.version == "3.13.0"]
    assert orjson.requirements == {"orjson": "3.13.0", INFERENCE_LIBRARY: "1.4.0"}
    assert orjson.companions == {INFERENCE_LIBRARY: "1.4.0"}
    assert "genson" not in {e.library for e in environments(data=MADE_UP)}


# cattrs-orjson calls orjson: a cattrs environment installs orjson's newest release too.
WITH_CATTRS = replace(
    MADE_UP,
    libraries=(*MADE_UP.libraries, Library("cattrs", (_release("26.2.1", ("3.12", "3.13")),))),
)


def test_a_library_whose_codecs_call_another_installs_its_newest_release() -> None:
    assert companions("cattrs") == (INFERENCE_LIBRARY, "orjson")
    cattrs = [e for e in environments(data=WITH_CATTRS) if e.library == "cattrs"]
    assert [e.requirements for e in cattrs] == [
        {"cattrs": "26.2.1", "orjson": "3.13.0", INFERENCE_LIBRARY: "1.4.0"}
    ] * 2
    assert [e.label for e in cattrs] == ["py3.12 cattrs 26.2.1", "py3.13 cattrs 26.2.1"]


def test_a_release_of_a_companion_renames_only_the_environments_that_call_it() -> None:
    orjson = WITH_CATTRS.libraries[0]
    newer = replace(orjson, releases=(_release("3.14.0", ("3.12",)), *orjson.releases))
    bumped = replace(WITH_CATTRS, libraries=(newer, *WITH_CATTRS.libraries[1:]))
    before = {e.asv_name for e in environments(data=WITH_CATTRS)}
    renamed = [e.label for e in environments(data=bumped) if e.asv_name not in before]
    # orjson's new release, and cattrs on the one Python it serves: nothing else.
    assert renamed == ["py3.12 orjson 3.14.0", "py3.12 cattrs 26.2.1"]


def test_a_companion_without_a_wheel_leaves_the_environment_out() -> None:
    genson = Library(INFERENCE_LIBRARY, (_release("1.4.0", ("3.12",)),))
    data = replace(MADE_UP, libraries=(*MADE_UP.libraries[:2], genson))
    labels = [e.label for e in environments(("3.13",), data=data)]
    assert labels == ["py3.13 stdlib", "py3.13 cbor2 6.2.1"]  # no genson for orjson on 3.13


def test_the_matrix_is_a_stdlib_environment_and_one_per_release_with_a_wheel() -> None:
    labels = [env.label for env in environments(data=MADE_UP)]
    assert labels == [
        "py3.12 stdlib",
        "py3.12 orjson 3.13.0",
        "py3.12 orjson 3.12.0",
        "py3.12 cbor2 6.2.1",
        "py3.12 cbor2 5.9.0",
        "py3.12 cbor2 5.6.5",
        "py3.13 stdlib",
        "py3.13 orjson 3.13.0",
        "py3.13 orjson 3.12.0",
        "py3.13 cbor2 6.2.1",
        "py3.14t stdlib",  # orjson has no free-threaded wheel: none of its environments
        "py3.14t cbor2 6.2.1",
    ]
    # A runner kind gets only the releases with a wheel for its platform.
    linux = [env.label for env in environments(data=MADE_UP, platform="linux-x86_64")]
    assert "py3.12 cbor2 5.6.5" not in linux and len(linux) == len(labels) - 1


def test_a_release_of_one_library_renames_no_other_environment() -> None:
    """cbor2 6.3.0 arrives and 5.9.0 leaves the policy's window: one environment more per
    Python that has its wheel, one fewer, and every other environment keeps its name."""
    cbor2 = MADE_UP.libraries[1]
    bumped_cbor2 = replace(
        cbor2,
        releases=(_release("6.3.0", ("3.12", "3.13", "3.14t")), *cbor2.releases[:1]),
    )
    bumped = replace(
        MADE_UP, libraries=(MADE_UP.libraries[0], bumped_cbor2, *MADE_UP.libraries[2:])
    )
    before = {env.asv_name for env in environments(data=MADE_UP)}
    after = {env.asv_name for env in environments(data=bumped)}
    added = {env.label for env in environments(data=bumped) if env.asv_name not in before}
    gone = {env.label for env in environments(data=MADE_UP) if env.asv_name not in after}
    assert added == {"py3.12 cbor2 6.3.0", "py3.13 cbor2 6.3.0", "py3.14t cbor2 6.3.0"}
    assert gone == {"py3.12 cbor2 5.9.0", "py3.12 cbor2 5.6.5"}
    assert len(before & after) == len(before) - len(gone)


def test_newest_set_is_each_library_newest_release_with_a_wheel_in_one_environment() -> None:
    together = newest_set("3.12", data=MADE_UP)
    assert together.library is None and together.label == "py3.12 newest releases"
    assert together.requirements == {"cbor2": "6.2.1", "genson": "1.4.0", "orjson": "3.13.0"}
    assert LIBRARY_ENV not in json.dumps(together.as_include())  # it measures every codec
    assert newest_set("3.14t", data=MADE_UP).requirements == {"cbor2": "6.2.1", "genson": "1.4.0"}


def test_the_config_names_each_newest_set_and_the_matrix() -> None:
    names = [env.label for env in configured(MADE_UP)]
    assert names[:2] == ["py3.12 newest releases", "py3.12 stdlib"]
    together = [name for name in names if name.endswith("newest releases")]
    assert together == [f"py{p} newest releases" for p in MADE_UP.pythons]
    config = asv_config(MADE_UP)
    assert config["pythons"] == list(MADE_UP.pythons)
    assert config["include"] == [env.as_include() for env in configured(MADE_UP)]


def test_a_newest_set_that_differs_by_platform_is_configured_once_for_each() -> None:
    """orjson 3.14.0 with a macOS wheel only: macOS's newest set is not Linux's."""
    orjson = MADE_UP.libraries[0]
    mac_only = replace(
        orjson, releases=(_release("3.14.0", ("3.12",), ("macos-arm64",)), *orjson.releases)
    )
    data = replace(MADE_UP, libraries=(mac_only, *MADE_UP.libraries[1:]))
    linux = newest_set("3.12", platform="linux-x86_64", data=data)
    mac = newest_set("3.12", platform="macos-arm64", data=data)
    assert (linux.requirements["orjson"], mac.requirements["orjson"]) == ("3.13.0", "3.14.0")
    configured_312 = [e for e in configured(data) if e.python == "3.12" and e.library is None]
    assert configured_312 == [linux, mac]


def test_the_releases_file_names_every_codec_library() -> None:
    libraries = {registry.spec(name).library for name in codec_names()} - {STDLIB}
    data = load()
    # And the one library that is no codec's: the schema inference, only ever a companion,
    # at its newest release.
    assert {lib.name for lib in data.libraries} == libraries | {INFERENCE_LIBRARY}
    assert {lib.name for lib in measured(data)} == libraries
    assert len(data.library(INFERENCE_LIBRARY).releases) == 1


def test_environments_are_values() -> None:
    a = MatrixEnvironment.of("3.12", "cbor2", "6.2.1")
    assert a == MatrixEnvironment.of("3.12", "cbor2", "6.2.1") and len({a, a}) == 1
    assert a.version == "6.2.1" and MatrixEnvironment.of("3.12", STDLIB).version is None


def test_matrix_command_prints_the_count_and_each_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["matrix"]) == 0
    out = capsys.readouterr().out
    count = len(list(environments()))
    assert out.startswith(f"{count} environments")
    assert "3.10" in out  # the table keeps version strings, not floats (3.1)


def test_matrix_json_lists_every_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == [e.asv_name for e in environments()]
    assert all(r["python"] in load().pythons for r in rows)
    assert all(set(r["platforms"]) <= set(EVERYWHERE) for r in rows)


def test_write_config(tmp_path: Path) -> None:
    target = tmp_path / "asv.conf.json"
    assert main(["matrix", "--write-config", str(target)]) == 0
    assert target.read_text() == render_asv_config()


def test_a_config_that_cannot_be_written_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.cli import main

    assert main(["matrix", "--write-config", str(tmp_path / "no" / "such" / "x.json")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("serkit: error: cannot write ") and "Traceback" not in err


def test_a_releases_file_that_cannot_be_written_is_a_serkit_error(tmp_path: Path) -> None:
    from serkit.run.releases import BadReleases, load, save

    with pytest.raises(BadReleases, match="cannot write"):
        save(load(), tmp_path / "no" / "releases.json")
    assert not list(tmp_path.iterdir())


def test_each_release_counts_on_one_python_and_each_python_in_its_newest_releases() -> None:
    """Memory per call and instructions: the standard library everywhere, each Python's
    newest release of each library, every release on COUNTS_PYTHON (or its newest Python)."""
    assert COUNTS_PYTHON == "3.12"
    made_up = Releases(
        pythons=("3.12", "3.13", "3.14t"),
        minor_lines=3,
        libraries=(
            Library(
                "cbor2",
                (
                    _release("6.2.1", ("3.12", "3.13", "3.14t")),
                    _release("5.9.0", ("3.12", "3.13")),
                    _release("5.6.5", ("3.13", "3.14t")),  # no wheel for 3.12
                ),
            ),
        ),
        checked="2026-11-25",
    )
    envs = list(environments(platform="linux-x86_64", data=made_up))
    labels = {env.label for env in counted(envs)}
    assert labels == {
        "py3.12 stdlib",
        "py3.13 stdlib",
        "py3.14t stdlib",
        "py3.12 cbor2 6.2.1",  # newest everywhere
        "py3.13 cbor2 6.2.1",
        "py3.14t cbor2 6.2.1",
        "py3.12 cbor2 5.9.0",  # an older release: on 3.12 only
        "py3.14t cbor2 5.6.5",  # without 3.12: its newest Python
    }
    assert len(envs) == 3 + 7
