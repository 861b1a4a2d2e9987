"""serkit/results/identity.py: what a host runs beside its CPU, and changes between runs."""

from __future__ import annotations

import platform
from pathlib import Path

from serkit.results.identity import (
    IDENTITY_FIELDS,
    UNREADABLE,
    cpu_flags,
    host_id,
    host_identity,
    identity_changes,
    image,
    microcode,
    os_release,
    same_host,
    speed_host,
)

X86 = """processor\t: 0
model name\t: AMD EPYC 7763 64-Core Processor
microcode\t: 0xa0011d5
flags\t\t: fpu sse2 avx2 avx512f

processor\t: 1
model name\t: AMD EPYC 7763 64-Core Processor
microcode\t: 0xa0011d5
flags\t\t: fpu sse2 avx2 avx512f
"""
ARM = """processor\t: 0
Features\t: fp asimd aes sha2 atomics
CPU implementer\t: 0x41
"""


def test_microcode_and_flags_from_cpuinfo(tmp_path: Path) -> None:
    x86, arm = tmp_path / "x86", tmp_path / "arm"
    x86.write_text(X86)
    arm.write_text(ARM)
    assert microcode(x86) == "0xa0011d5"
    assert cpu_flags(x86, "Linux") == "avx2 avx512f fpu sse2"
    assert microcode(arm) == UNREADABLE  # ARM's /proc/cpuinfo gives no revision
    assert cpu_flags(arm, "Linux") == "aes asimd atomics fp sha2"
    assert cpu_flags(tmp_path / "missing", "Linux") == UNREADABLE


def test_macos_flags_come_from_sysctl(tmp_path: Path) -> None:
    out = "hw.optional.arm.FEAT_LSE: 1\nhw.optional.arm.FEAT_SME: 0\nhw.optional.neon: 1\n"
    asked: list[list[str]] = []

    def sysctl(args: list[str]) -> str:
        asked.append(args)
        return out

    assert cpu_flags(tmp_path / "none", "Darwin", sysctl) == "arm.FEAT_LSE neon"
    assert asked == [["hw.optional"]]


def test_os_release_and_image(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n')
    assert os_release(release, "Linux") == "Ubuntu 24.04.1 LTS"
    assert os_release(tmp_path / "none", "Linux") == UNREADABLE
    assert image({"ImageOS": "ubuntu24", "ImageVersion": "20241124.1.0"}) == (
        "ubuntu24 20241124.1.0"
    )
    assert image({}) is None


def test_this_host_has_an_identity() -> None:
    facts = host_identity({})
    assert set(facts) == set(IDENTITY_FIELDS)
    assert facts["kernel"] == platform.release() and facts["image"] is None


BEFORE = {
    "cpu_model": "AMD EPYC 7763",
    "logical_cpus": 4,
    "kernel": "6.8.0-1014-azure",
    "os_release": "Ubuntu 24.04.1 LTS",
    "image": "ubuntu24 20241124.1.0",
    "libc": "glibc 2.39",
    "cpu_microcode": "0xa0011d5",
    "cpu_flags": "avx2 avx512f fpu sse2",
    "pythons": {"3.11": {"version": "3.11.10", "build_flags": ["--enable-optimizations"]}},
}


def test_each_change_between_two_runs_is_said() -> None:
    assert identity_changes(BEFORE, dict(BEFORE)) == [] and same_host(BEFORE, dict(BEFORE))
    after = {
        **BEFORE,
        "kernel": "6.8.0-1017-azure",
        "image": "ubuntu24 20241201.1.0",
        "cpu_flags": "avx2 avx512_fp16 fpu sse2",
        "pythons": {"3.11": {"version": "3.11.11", "build_flags": ["--enable-optimizations"]}},
    }
    assert identity_changes(BEFORE, after) == [
        "kernel 6.8.0-1014-azure → 6.8.0-1017-azure",
        "image ubuntu24 20241124.1.0 → ubuntu24 20241201.1.0",
        "CPU flags +avx512_fp16 -avx512f",
        "Python 3.11 3.11.10 → 3.11.11",
    ]
    assert not same_host(BEFORE, after)


def test_a_fact_not_recorded_is_no_change_claimed_and_never_the_same_host() -> None:
    old_run = {"cpu_model": "AMD EPYC 7763", "logical_cpus": 4}  # recorded before identities
    assert identity_changes(old_run, BEFORE) == []
    assert not same_host(old_run, BEFORE)  # but not known to be the same, either
    assert identity_changes(BEFORE, {**BEFORE, "cpu_microcode": UNREADABLE}) == []
    assert not same_host(BEFORE, {**BEFORE, "cpu_microcode": UNREADABLE})


def test_the_host_a_canary_speaks_for_is_one_vm_not_one_image(tmp_path: Path) -> None:
    """Two CI runners of one image are the same host to `same_host`, but not to the canary:
    their hostnames or machine ids differ. The machine id is kept hashed."""
    machine_id = tmp_path / "machine-id"
    machine_id.write_text("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    found = host_id(machine_id)
    assert found is not None and len(found) == 16 and "3d1219c7" not in found
    assert host_id(tmp_path / "none") is None
    one = {**BEFORE, "hostname": "runner-1", "host_id": found}
    assert speed_host(one) == speed_host(dict(one))
    for other in ({"hostname": "runner-2"}, {"host_id": "0" * 16}, {"kernel": "6.9"}):
        assert speed_host({**one, **other}) != speed_host(one)
    assert same_host(one, {**one, "hostname": "runner-2"})
    assert speed_host({**one, "kernel": UNREADABLE}) is None  # no identity: nothing scales
    assert speed_host({k: v for k, v in one.items() if k != "hostname"}) is None


def test_many_flags_are_counted_not_all_listed() -> None:
    many = " ".join(f"f{i:02}" for i in range(20))
    (change,) = identity_changes({**BEFORE, "cpu_flags": "x"}, {**BEFORE, "cpu_flags": many})
    assert change.startswith("CPU flags +f00 +f01") and change.endswith("and 13 more")
