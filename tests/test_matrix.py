from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from serkit.cli import main
from serkit.codecs.registry import STDLIB, codec_names, registry
from serkit.run.matrix import (
    LIBRARIES,
    LIBRARY_ENV,
    PYTHONS,
    asv_config,
    baseline,
    environments,
    render_asv_config,
)
from serkit.schemas.derive import INFERENCE_LIBRARY

ROOT = Path(__file__).resolve().parents[1]


def test_asv_conf_json_is_generated_from_the_matrix() -> None:
    assert (ROOT / "asv.conf.json").read_text() == render_asv_config(), (
        "asv.conf.json is stale: run `serkit matrix --write-config asv.conf.json`"
    )


def test_asv_reads_the_config_and_names_environments_as_serkit_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from asv import environment
    from asv.config import Config
    from asv.plugin_manager import plugin_manager
    from asv.plugins.virtualenv import Virtualenv

    from serkit.run.asv_env import OneCallVirtualenv
    from serkit.run.interpreters import expose, find_pythons

    found = find_pythons(PYTHONS)
    env = expose(found, tmp_path / "pythons")
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.chdir(ROOT)  # asv imports a ".module" plugin from the current folder
    conf = Config.load(str(ROOT / "asv.conf.json"))
    for plugin in conf.plugins:  # as every asv command does before it runs
        plugin_manager.import_plugin(plugin)
    built = list(environment.get_environments(conf, None, verbose=False))
    assert {type(e) for e in built} == {OneCallVirtualenv}
    present = tuple(p for p, exe in found.items() if exe is not None)
    # serkit's names are asv's virtualenv names: results on disk keep their meaning.
    assert [e.name for e in built] == [e.asv_name for e in environments(present)]
    # ... and so are the folders, which a rebuild then replaces instead of doubling.
    first = built[0]
    plain = Virtualenv(conf, first._python, first._requirements, first._tagged_env_vars)
    assert (first.name, first.dir_name) == (plain.name, plain.dir_name)


def test_each_environment_varies_one_library_against_its_baseline() -> None:
    for env in environments():
        base = baseline(env.python)
        changed = {k for k in base.requirements if env.requirements[k] != base.requirements[k]}
        assert changed == ({env.varied} if env.varied else set())
        assert set(env.requirements) == set(base.requirements)


def test_the_matrix_grows_linearly_not_as_a_product() -> None:
    envs = list(environments())
    extra = sum(len(lib.releases) - 1 for lib in LIBRARIES if lib.axis)
    assert len(envs) <= (1 + extra) * len(PYTHONS)
    per_python = Counter(env.python for env in envs)
    assert set(per_python) == set(PYTHONS)
    assert per_python["3.11"] == 1 + extra  # every release has a 3.11 wheel


def test_baseline_is_the_newest_release_with_a_wheel() -> None:
    assert baseline("3.11").requirements["ujson"] == "6.1.0"
    assert baseline("3.9").requirements["ujson"] == "5.10.0"  # 6.x needs 3.10
    assert "ormsgpack" in baseline("3.9").missing


def test_each_axis_has_two_or_three_releases_and_names_a_codec_library() -> None:
    libraries = {registry.spec(name).library for name in codec_names()} - {STDLIB}
    # And the one library that is no codec's: the schema inference, never an axis.
    assert {lib.name for lib in LIBRARIES} == libraries | {INFERENCE_LIBRARY}
    assert not next(lib for lib in LIBRARIES if lib.name == INFERENCE_LIBRARY).axis
    for lib in LIBRARIES:
        if lib.axis:
            assert 2 <= len(lib.releases) <= 3, lib.name


def test_axis_environments_tell_the_benchmarks_what_they_vary() -> None:
    includes = asv_config()["include"]
    assert isinstance(includes, list)
    varied = [entry for entry in includes if "env_nobuild" in entry]
    assert varied and all(set(entry["env_nobuild"]) == {LIBRARY_ENV} for entry in varied)


def test_matrix_command_prints_the_count_and_each_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["matrix"]) == 0
    out = capsys.readouterr().out
    count = len(list(environments()))
    assert out.startswith(f"{count} environments")
    assert "3.10" in out  # the table keeps version strings, not floats (3.1)


def test_matrix_json_lists_every_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == [e.asv_name for e in environments()]
    assert all(r["python"] in PYTHONS for r in rows)


def test_write_config(tmp_path: Path) -> None:
    target = tmp_path / "asv.conf.json"
    assert main(["matrix", "--write-config", str(target)]) == 0
    assert target.read_text() == render_asv_config()
