"""`serkit hosts` and serkit/hostinfo.py: what asv records of a machine, and what it does not."""

from __future__ import annotations

import json
import platform
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from results_factory import COMMIT, results_file, two_hosts, values, write_machine

from serkit.cli import main
from serkit.compare.comparison import compare
from serkit.results.host_file import (
    FORMAT_KEY,
    HOST_FILE,
    MAX_RUNS,
    cpus_seen,
    merge_runs,
    mixed_cpu_warnings,
    read_runs,
    write_runs,
)
from serkit.results.hosts import (
    UNREADABLE,
    collect,
    cpu_model,
    governor,
    python_build,
    record_host,
    turbo,
)
from serkit.results.tree import read_tree


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fake_sysfs(root: Path, governors: list[str], files: dict[str, str]) -> Path:
    for i, name in enumerate(governors):
        folder = root / f"cpu{i}" / "cpufreq"
        folder.mkdir(parents=True)
        (folder / "scaling_governor").write_text(name + "\n")
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(content + "\n")
    return root


# --- collecting ----------------------------------------------------------------------------


def test_governor_one_mixed_or_unreadable(tmp_path: Path) -> None:
    assert governor(fake_sysfs(tmp_path / "one", ["performance"] * 4, {})) == "performance"
    mixed = fake_sysfs(tmp_path / "mixed", ["powersave", "performance", "powersave"], {})
    assert governor(mixed) == "mixed: performance (1 CPUs), powersave (2 CPUs)"
    assert governor(tmp_path / "vm") == UNREADABLE  # no cpufreq at all, as in many VMs


@pytest.mark.parametrize(
    ("files", "state"),
    [
        ({"intel_pstate/no_turbo": "1"}, "off"),
        ({"intel_pstate/no_turbo": "0"}, "on"),
        ({"cpufreq/boost": "1"}, "on"),
        ({"cpufreq/boost": "0"}, "off"),
        ({}, UNREADABLE),
    ],
)
def test_turbo_state(tmp_path: Path, files: dict[str, str], state: str) -> None:
    assert turbo(fake_sysfs(tmp_path, [], files)) == state


def test_cpu_model_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6230\n")
    assert cpu_model(cpuinfo) == "Intel(R) Xeon(R) Gold 6230"


def test_an_arm_cpu_is_named_by_its_part_numbers(tmp_path: Path) -> None:
    """Linux on arm64 names no model: two ARM servers must still read differently."""
    cpuinfo = tmp_path / "cpuinfo"
    core = "processor\t: {}\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU part\t: {}\n\n"
    cpuinfo.write_text(core.format(0, "0xd49") + core.format(1, "0xd49"))
    assert cpu_model(cpuinfo, "Linux") == "ARM Neoverse-N2 (0x41:0xd49)"
    cpuinfo.write_text(core.format(0, "0xd0c"))
    assert cpu_model(cpuinfo, "Linux") == "ARM Neoverse-N1 (0x41:0xd0c)"
    cpuinfo.write_text(core.format(0, "0xfff"))
    assert cpu_model(cpuinfo, "Linux") == "ARM unknown (0x41:0xfff)"


@pytest.mark.slow
def test_python_build_of_this_interpreter() -> None:
    build = python_build(Path(sys.executable))
    assert build["implementation"] == platform.python_implementation()
    assert build["version"] == platform.python_version()
    assert build["sys_version"] == sys.version
    args = sysconfig.get_config_var("CONFIG_ARGS") or ""
    assert ("--enable-shared" in args) == ("--enable-shared" in (build["build_flags"] or []))
    assert not any(flag.startswith("--prefix") for flag in build["build_flags"] or [])


def test_an_interpreter_that_does_not_run_is_unreadable(tmp_path: Path) -> None:
    assert python_build(tmp_path / "python9.9")["implementation"] == UNREADABLE


def test_record_host_writes_beside_asv_files(tmp_path: Path) -> None:
    path = record_host(tmp_path / "results", "box-1", {"3.99": None})
    assert path == tmp_path / "results" / "box-1" / HOST_FILE
    data = yaml.safe_load(path.read_text())
    assert data["machine"] == "box-1" and data[FORMAT_KEY] == 2
    # asv reads every *.json in a machine's folder as results, and warns about this one.
    assert not path.name.endswith(".json")
    # No `version` key: `asv update` would rewrite a file whose version is below its own.
    assert "version" not in data
    (run_,) = data["runs"]
    assert {"cpu_model", "logical_cpus", "governor", "turbo", "os", "pythons"} <= set(run_)
    this = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert list(run_["pythons"]) == [this]  # no interpreter for 3.99: this one instead
    assert run_["os"] == platform.platform() and run_["hostname"] == platform.node()


def test_a_run_records_its_hosts_identity_and_the_files_it_filed(tmp_path: Path) -> None:
    path = record_host(tmp_path, "box-1", filed=["12345678-env@20261124T031700Z.json"])
    (run_,) = yaml.safe_load(path.read_text())["runs"]
    assert run_["kernel"] == platform.release() and run_["cpu_flags"]
    assert {"os_release", "image", "libc", "cpu_microcode"} <= set(run_)
    assert run_["results"] == ["12345678-env@20261124T031700Z.json"]


def test_hosts_flags_each_change_of_a_machines_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    runs = [
        {"recorded_at": "2026-11-02T03:17:00+00:00", "kernel": "6.8.0-1014", "libc": "glibc 2.39"},
        {"recorded_at": "2026-11-09T03:17:00+00:00", "kernel": "6.8.0-1014", "libc": "glibc 2.39"},
        {"recorded_at": "2026-11-16T03:17:00+00:00", "kernel": "6.8.0-1017", "libc": "glibc 2.39"},
    ]
    write_runs(root / "a" / HOST_FILE, "a", runs)
    code, out, _ = run(capsys, "hosts", "--results", str(root))
    changes = next(line for line in out.splitlines() if line.startswith("host changes"))
    assert code == 0 and "CHANGED 1 time; newest at 2026-11-16T03:17:00+00:00" in changes
    assert "kernel 6.8.0-1014 → 6.8.0-1017" in changes
    kernel = next(line for line in out.splitlines() if line.startswith("kernel"))
    assert kernel.split()[1:] == ["6.8.0-1017", "-"]


def test_each_run_and_shard_adds_an_entry(tmp_path: Path) -> None:
    record_host(tmp_path, "kind-1", shard="1/2", commit=COMMIT, environments=["py3.11 baseline"])
    record_host(tmp_path, "kind-1", shard="2/2", commit=COMMIT)
    runs = read_runs(tmp_path / "kind-1", [])
    assert runs is not None and [r["shard"] for r in runs] == ["1/2", "2/2"]
    assert runs[0]["environments"] == ["py3.11 baseline"] and runs[1]["commit"] == COMMIT


def test_a_format_1_host_file_reads_as_one_run(tmp_path: Path) -> None:
    old = {FORMAT_KEY: 1, "machine": "old", "recorded_at": "2026-01-01T00:00:00+00:00"}
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / HOST_FILE).write_text(yaml.safe_dump({**old, "cpu_model": "Xeon"}))
    warnings: list[str] = []
    assert read_runs(tmp_path / "old", warnings) == [
        {"recorded_at": "2026-01-01T00:00:00+00:00", "cpu_model": "Xeon"}
    ]
    assert not warnings
    record_host(tmp_path, "old")  # the old host stays on record, beside the new run
    runs = read_runs(tmp_path / "old", warnings)
    assert runs is not None and len(runs) == 2 and runs[0]["cpu_model"] == "Xeon"


def test_an_unreadable_host_file_is_kept_aside_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / HOST_FILE).write_text("serkit_host_format: 99\n")
    record_host(tmp_path, "m")
    assert (tmp_path / "m" / (HOST_FILE + ".unreadable")).read_text() == "serkit_host_format: 99\n"
    assert len(read_runs(tmp_path / "m", []) or []) == 1


def test_merged_runs_are_each_run_once_oldest_first_and_capped() -> None:
    runs = [{"recorded_at": f"2026-01-{d:02d}", "shard": "1/2"} for d in range(1, 29)]
    assert merge_runs([runs[::2], runs, runs[::-1]]) == runs
    many = [{"recorded_at": f"{i:05d}"} for i in range(MAX_RUNS + 5)]
    assert merge_runs([many]) == many[5:]


def _runs_on(cpus: list[tuple[str, int]]) -> list[dict[str, object]]:
    return [
        {
            "recorded_at": f"2026-02-0{i + 1}",
            "shard": f"{i + 1}/{len(cpus)}",
            "commit": COMMIT,
            "cpu_model": model,
            "logical_cpus": count,
        }
        for i, (model, count) in enumerate(cpus)
    ]


def test_mixed_cpus_are_flagged_per_machine_name() -> None:
    same = cpus_seen(_runs_on([("AMD EPYC 7763", 4), ("AMD EPYC 7763", 4)]))
    assert len(same) == 1 and same[0]["runs"] == 2 and same[0]["shards"] == ["1/2", "2/2"]
    mixed = cpus_seen(_runs_on([("AMD EPYC 7763", 4), ("Intel Xeon 8272CL", 4)]))
    rows = [{"machine": "kind", "cpus": mixed}, {"machine": "fine", "cpus": same}]
    (warning,) = mixed_cpu_warnings(rows)
    assert warning.startswith("machine kind: its runs saw 2 different CPUs")
    assert "Intel Xeon 8272CL x4 (1 run, shards 2/2, commits 12345678)" in warning
    # The same model with fewer cores is other hardware too.
    assert len(cpus_seen(_runs_on([("AMD EPYC 7763", 4), ("AMD EPYC 7763", 2)]))) == 2


def test_hosts_flags_a_machine_whose_shards_saw_different_cpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    write_runs(root / "a" / HOST_FILE, "a", _runs_on([("AMD EPYC 7763", 4), ("Intel Xeon", 4)]))
    code, out, _ = run(capsys, "hosts", "--results", str(root))
    assert code == 0
    assert "MIXED CPUS: machine a: its runs saw 2 different CPUs" in out
    assert "MIXED: AMD EPYC 7763 x4: 1 run" in out


@pytest.mark.slow
def test_collect_records_each_given_python_in_version_order() -> None:
    data = collect({"3.10": Path(sys.executable), "3.9": Path(sys.executable)})
    assert list(data["pythons"]) == ["3.9", "3.10"]
    assert data["pythons"]["3.10"]["executable"] == sys.executable


# --- serkit hosts --------------------------------------------------------------------------


def test_hosts_table_shows_asv_profile_and_dashes_for_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    write_machine(root, "named-only", [results_file("named-only", values())])
    record_host(root, "a")
    code, out, _ = run(capsys, "hosts", "--results", str(root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["a", "b", "named-only"]
    cpu = next(line for line in lines if line.startswith("asv: cpu "))
    assert cpu.split()[2:] == ["Intel", "Xeon", "AMD", "EPYC", "-"]
    gov = next(line for line in lines if line.startswith("governor"))
    assert gov.split()[1] == governor() and gov.split()[2:] == ["-", "-"]
    assert f"no {HOST_FILE} for b, named-only" in out
    assert "1 file, 1 env, 1 commit; Python 3.11" in out


def test_hosts_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_hosts(tmp_path)
    record_host(root, "b")
    code, out, _ = run(capsys, "hosts", "--results", str(root), "--format", "json")
    rows = {row["machine"]: row for row in json.loads(out)}
    assert code == 0 and set(rows) == {"a", "b"}
    assert rows["a"]["asv"] == {
        "cpu": "Intel Xeon",
        "num_cpu": "4",
        "arch": "x86_64",
        "os": "Linux 6.1",
        "ram": "16GB",
    }
    assert rows["a"]["host"] is None and rows["b"]["host"]["governor"] == governor()
    assert rows["b"]["results"] == {
        "files": 1,
        "environments": 1,
        "commits": 1,
        "pythons": ["3.11"],
    }


def test_a_host_file_is_not_read_as_results(tmp_path: Path) -> None:
    root = two_hosts(tmp_path, time_factor=2.0)
    record_host(root, "a")
    tree = read_tree(root)
    assert not tree.warnings
    assert compare(tree, "a", "b").summary()[1].geomean == pytest.approx(2.0)


def test_a_broken_host_file_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    (root / "a" / HOST_FILE).write_text('{"governor": ')
    code, out, err = run(capsys, "hosts", "--results", str(root))
    assert code == 0 and f"skipped {root / 'a' / HOST_FILE}: not valid YAML" in err
    assert "Intel Xeon" in out


def test_hosts_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "hosts", "--results", str(tmp_path))
    assert code == 3 and err.startswith("serkit: error: no asv results in")
    assert len(err.splitlines()) == 1


def test_a_ci_workflow_run_is_named_alike_in_every_shard() -> None:
    from serkit.results.hosts import ci_run

    environ = {"GITHUB_REPOSITORY": "org/serkit", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2"}
    assert ci_run(environ) == "org/serkit#7"  # a re-run of a failed shard: the same run
    assert ci_run({}) is None


def test_asvs_ram_reads_in_binary_units() -> None:
    from serkit.report.hosts_table import asv_field_text

    assert asv_field_text("ram", "25276063744") == "23.5 GiB"
    assert asv_field_text("ram", "16GB") == "16GB"  # not a count of bytes: as recorded
    assert asv_field_text("ram", None) == "-"
    assert asv_field_text("cpu", "AMD EPYC") == "AMD EPYC"
