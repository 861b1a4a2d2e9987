"""serkit/run/naming.py and run/machine_profile.py: stable machine names on ephemeral runners."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serkit.run import machine_profile
from serkit.run.naming import (
    LABEL_ENV,
    Hardware,
    derived_name,
    looks_generated,
    named_by_hand,
    runner_label,
)

GITHUB_X86 = Hardware("AMD EPYC 7763 64-Core Processor", 4, "x86_64", "linux", "ubuntu24")
GITHUB_ARM = Hardware("ARM Neoverse-N2 (0x41:0xd49)", 4, "aarch64", "linux", "ubuntu24")
GITHUB_MAC = Hardware("Apple M1 (Virtual)", 3, "arm64", "macos", "macos14")
GITHUB_ENV = {"RUNNER_ENVIRONMENT": "github-hosted", "ImageOS": "ubuntu24"}


@pytest.mark.parametrize(
    "hostname",
    [
        "fv-az1234-567",
        "fv-az770-40.internal.cloudapp.net",
        "runnervmf4ws1",
        "Mac-1733408069537.local",
        "runner-abcd1234-project-42-concurrent-0",
        "3f4e5a6b7c8d",
        "web-7d4b9c8f6d-x2x9q",
        "ip-10-0-12-34",
        "localhost",
        "",
    ],
)
def test_generated_hostnames(hostname: str) -> None:
    assert looks_generated(hostname, {})


@pytest.mark.parametrize("hostname", ["vm", "bench-box", "alices-mbp.local", "ci-xeon-6230"])
def test_hostnames_given_by_people(hostname: str) -> None:
    assert not looks_generated(hostname, {})


def test_every_hostname_on_a_github_hosted_runner_is_generated() -> None:
    assert looks_generated("bench-box", {"RUNNER_ENVIRONMENT": "github-hosted"})
    assert not looks_generated("bench-box", {"RUNNER_ENVIRONMENT": "self-hosted"})


def test_the_runner_label() -> None:
    assert runner_label({LABEL_ENV: "perf-lab", "ImageOS": "ubuntu24"}) == "perf-lab"
    assert runner_label({"ImageOS": "macos14", "RUNNER_NAME": "GitHub Actions 7"}) == "macos14"
    assert runner_label({"RUNNER_NAME": "GitHub Actions 1000001234"}) is None
    assert runner_label({"RUNNER_NAME": "lab-epyc-1"}) == "lab-epyc-1"  # a self-hosted runner
    assert runner_label({}) is None


def test_github_runner_kinds_get_readable_distinct_names() -> None:
    names = [derived_name(h) for h in (GITHUB_X86, GITHUB_ARM, GITHUB_MAC)]
    assert names[0] is not None and names[0].startswith("ubuntu24-linux-x86-64-amd-epyc-7763")
    assert names[0].endswith("-4cpu-" + names[0][-8:])
    assert names[1] is not None and names[1].startswith("ubuntu24-linux-aarch64-arm-neoverse-n2")
    assert names[2] is not None and names[2].startswith("macos14-macos-arm64-apple-m1")
    assert len(set(names)) == 3


def test_same_hardware_same_name_and_no_cpu_no_name() -> None:
    again = Hardware(*(getattr(GITHUB_X86, f) for f in GITHUB_X86.__dataclass_fields__))
    assert derived_name(again) == derived_name(GITHUB_X86)
    assert derived_name(Hardware("unreadable", 4, "x86_64", "linux", None)) is None


def test_two_cpus_that_read_alike_when_shortened_still_differ() -> None:
    """The readable part is cut and cleaned; the digest over the exact facts is not."""
    a = Hardware("Intel(R) Xeon(R) Platinum 8272CL CPU @ 2.60GHz", 2, "x86_64", "linux", None)
    b = Hardware("Intel Xeon Platinum 8272CL CPU @ 2.60GHz", 2, "x86_64", "linux", None)
    name_a, name_b = derived_name(a), derived_name(b)
    assert name_a is not None and name_b is not None
    assert name_a[:-8] == name_b[:-8] and name_a != name_b


hardware = st.builds(
    Hardware,
    cpu_model=st.text(min_size=1, max_size=80).filter(lambda t: t != "unreadable"),
    logical_cpus=st.integers(1, 512),
    arch=st.sampled_from(["x86_64", "aarch64", "arm64", "ppc64le"]),
    os=st.sampled_from(["linux", "macos", "windows"]),
    # A label of "runner" would read like GitLab's generated names (and change nothing).
    label=st.one_of(st.none(), st.text(max_size=20).filter(lambda t: "runner" not in t.lower())),
)


@given(hardware, hardware)
def test_different_hardware_never_shares_a_name(a: Hardware, b: Hardware) -> None:
    if a != b:
        assert derived_name(a) != derived_name(b)
    else:
        assert derived_name(a) == derived_name(b)


@given(hardware)
def test_a_derived_name_is_a_folder_name_and_known_as_derived(h: Hardware) -> None:
    name = derived_name(h)
    assert name is not None and "/" not in name and name.strip() == name
    assert not looks_generated(name, {}) and not named_by_hand(name)


# --- which name `serkit bench` uses ----------------------------------------------------------


def _profiles(home: Path, *names: str) -> Path:
    data: dict[str, object] = {n: {"machine": n, "cpu": "x"} for n in names}
    (home / ".asv-machine.json").write_text(json.dumps({**data, "version": 1}))
    return home


def test_a_generated_hostname_gives_the_hardware_name(tmp_path: Path) -> None:
    name = machine_profile.machine_name(
        [], tmp_path, environ=GITHUB_ENV, node="fv-az1-2", hardware=GITHUB_X86
    )
    assert name == derived_name(GITHUB_X86)
    # A second run on a new runner of the same kind: the same name.
    assert name == machine_profile.machine_name(
        [], tmp_path, environ=GITHUB_ENV, node="fv-az9-9", hardware=GITHUB_X86
    )


def test_a_name_given_to_asv_or_chosen_by_hand_stands(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"environ": GITHUB_ENV, "node": "fv-az1-2", "hardware": GITHUB_X86}
    assert machine_profile.machine_name(["--machine", "mine"], tmp_path, **kw) == "mine"
    _profiles(tmp_path, "ci-xeon-6230")  # `asv machine --yes --machine ci-xeon-6230`
    assert machine_profile.machine_name([], tmp_path, **kw) == "ci-xeon-6230"
    _profiles(tmp_path, "fv-az0-0")  # a profile named after an earlier generated hostname
    assert machine_profile.machine_name([], tmp_path, **kw) == derived_name(GITHUB_X86)
    # A profile serkit wrote for other hardware (or another label) on a reused home is not
    # a person's choice: the name follows this hardware.
    _profiles(tmp_path, str(derived_name(GITHUB_ARM)))
    assert machine_profile.machine_name([], tmp_path, **kw) == derived_name(GITHUB_X86)


def test_a_host_named_by_hand_keeps_asvs_choice(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"environ": {}, "hardware": GITHUB_X86}
    assert machine_profile.machine_name([], tmp_path, node="bench-box", **kw) == "bench-box"
    _profiles(tmp_path, "only-box")
    assert machine_profile.machine_name([], tmp_path, node="bench-box", **kw) == "only-box"


def test_without_a_cpu_model_the_generated_hostname_stays(tmp_path: Path) -> None:
    unknown = Hardware("unreadable", 2, "x86_64", "linux", None)
    name = machine_profile.machine_name(
        [], tmp_path, environ={}, node="3f4e5a6b7c8d", hardware=unknown
    )
    assert name == "3f4e5a6b7c8d"


def test_the_derived_name_gets_a_full_asv_profile(tmp_path: Path) -> None:
    """`asv machine --yes --machine NAME` records only the name; serkit records asv's facts."""
    machine_profile.ensure_machine(Path.cwd(), {"HOME": str(tmp_path)}, "ubuntu24-linux-x")
    profiles = json.loads((tmp_path / ".asv-machine.json").read_text())
    profile = profiles["ubuntu24-linux-x"]
    assert profile["machine"] == "ubuntu24-linux-x"
    assert {"cpu", "num_cpu", "arch", "os", "ram"} <= set(profile) and profile["num_cpu"]
    before = (tmp_path / ".asv-machine.json").read_text()
    machine_profile.ensure_machine(Path.cwd(), {"HOME": str(tmp_path)}, "ubuntu24-linux-x")
    assert (tmp_path / ".asv-machine.json").read_text() == before  # once only
