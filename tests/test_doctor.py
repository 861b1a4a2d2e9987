from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from serkit.cli import main
from serkit.codecs.registry import CodecRegistry
from serkit.trust import doctor
from serkit.trust.doctor import Item


def _cpu(root: Path, governor: str | None, no_turbo: str | None) -> Path:
    if governor is not None:
        for cpu in ("cpu0", "cpu1"):
            folder = root / cpu / "cpufreq"
            folder.mkdir(parents=True)
            (folder / "scaling_governor").write_text(governor + "\n")
    if no_turbo is not None:
        (root / "intel_pstate").mkdir(parents=True)
        (root / "intel_pstate" / "no_turbo").write_text(no_turbo + "\n")
    return root


def _by_name(items: list[Item]) -> dict[str, Item]:
    return {item.name: item for item in items}


def test_a_tuned_cpu_raises_no_warning(tmp_path: Path) -> None:
    items = _by_name(doctor._cpu_items(_cpu(tmp_path, "performance", "1")))
    assert items["governor"] == Item("governor", "performance")
    assert items["turbo / boost"] == Item("turbo / boost", "off")


def test_powersave_and_turbo_are_warned_about(tmp_path: Path) -> None:
    items = _by_name(doctor._cpu_items(_cpu(tmp_path, "powersave", "0")))
    assert "performance governor" in items["governor"].warning
    assert items["turbo / boost"].value == "on" and "boost" in items["turbo / boost"].warning


def test_no_cpufreq_says_the_state_is_unknown(tmp_path: Path) -> None:
    items = _by_name(doctor._cpu_items(tmp_path))
    assert items["governor"].value == "unreadable" and "VM" in items["governor"].warning


@pytest.mark.parametrize(
    ("load", "cpus", "warned"),
    [((0.1, 0.2, 0.3), 2, False), ((0.9, 0.5, 0.4), 2, True), ((0.9, 0.5, 0.4), 8, False)],
)
def test_load_is_judged_per_usable_cpu(load: tuple[float, ...], cpus: int, warned: bool) -> None:
    item = doctor._load_item(load, cpus)
    assert item.value.startswith(f"{load[0]:.2f} ") and bool(item.warning) == warned


def test_an_unpinned_process_is_told_how_to_pin_it() -> None:
    assert "taskset" in doctor._affinity_item([0, 1], 2).warning
    pinned = doctor._affinity_item([1], 2)
    assert pinned.value == "yes, to CPU 1 of 2" and not pinned.warning


def test_python_build_without_pgo_or_lto_is_warned_about() -> None:
    plain = _by_name(doctor.python_items("'--prefix=/x' '--enable-shared'", debug=False))
    assert plain["python build"].value == "--enable-shared"
    assert "no PGO or LTO" in plain["python build"].warning
    tuned = _by_name(doctor.python_items("'--enable-optimizations' '--with-lto'", debug=False))
    assert not tuned["python build"].warning and not tuned["debug build"].warning
    debug = _by_name(doctor.python_items("'--with-pydebug'", debug=True))
    assert "never benchmark" in debug["debug build"].warning


def test_codecs_show_their_implementation_and_pure_python_by_design_is_no_warning() -> None:
    items = _by_name(doctor.codec_items())
    assert items["codec orjson"].value.startswith("c (orjson ")
    assert items["codec yaml"].value.startswith("python") and not items["codec yaml"].warning


def test_a_compiled_codec_that_fell_back_to_python_is_warned_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MSGPACK_PUREPYTHON", "1")
    fresh = CodecRegistry()  # binds msgpack anew; the shared registry keeps its C binding
    monkeypatch.setattr(doctor, "registry", fresh)
    monkeypatch.setattr(doctor, "codec_names", fresh.names)
    # A fresh import, so that msgpack reads the variable; the old modules come back after.
    for name in [m for m in sys.modules if m == "msgpack" or m.startswith("msgpack.")]:
        monkeypatch.delitem(sys.modules, name)
    items = _by_name(doctor.codec_items())
    assert items["codec msgpack"].value.startswith("python")
    assert "pure Python" in items["codec msgpack"].warning


def test_doctor_prints_every_item_and_exits_1_on_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["doctor", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    names = [item["name"] for item in data["items"]]
    for expected in ("cpu model", "governor", "turbo / boost", "load average", "pinned"):
        assert expected in names
    assert "python build" in names and "codec orjson" in names
    assert data["warnings"] == sum(1 for item in data["items"] if item["warning"])
    assert code == (1 if data["warnings"] else 0)  # this machine's state: either is right
    assert main(["doctor"]) == code
    assert "governor" in capsys.readouterr().out


@pytest.mark.parametrize(("warning", "status"), [("", 0), ("turbo is on", 1)])
def test_doctor_exits_1_when_it_warns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, warning: str, status: int
) -> None:
    monkeypatch.setattr(doctor, "diagnose", lambda: [doctor.Item("turbo / boost", "on", warning)])
    assert main(["doctor"]) == status
    assert ("1 warning." in capsys.readouterr().out) == bool(warning)
