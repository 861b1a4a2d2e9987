"""serkit/run/index.py: which Pythons a release's wheels serve, on each runner kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from serkit.errors import SerkitError
from serkit.run.index import (
    IndexFile,
    exact_pins,
    fetch_metadata,
    parse_html_page,
    parse_json_page,
    platform_here,
    project_url,
    releases,
    split_python,
)

PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14", "3.14t")


def _served(*filenames: str, pythons: tuple[str, ...] = PYTHONS) -> dict[str, tuple[str, ...]]:
    (release,) = releases([IndexFile(f) for f in filenames], pythons)
    return dict(release.wheels)


def test_a_cpython_wheel_serves_its_own_python_on_its_own_platform() -> None:
    wheels = _served("lib-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    assert wheels == {"linux-x86_64": ("3.12",), "linux-aarch64": (), "macos-arm64": ()}


def test_a_stable_abi_wheel_serves_every_later_python_but_not_the_free_threaded() -> None:
    wheels = _served("lib-1.0-cp311-abi3-manylinux_2_28_aarch64.whl")
    assert wheels["linux-aarch64"] == ("3.11", "3.12", "3.13", "3.14")


def test_the_free_threaded_build_is_its_own_python() -> None:
    wheels = _served("lib-1.0-cp314-cp314t-manylinux_2_28_x86_64.whl")
    assert wheels["linux-x86_64"] == ("3.14t",)
    wheels = _served("lib-1.0-cp314-cp314-manylinux_2_28_x86_64.whl")
    assert wheels["linux-x86_64"] == ("3.14",)


def test_musl_wheels_do_not_serve_the_glibc_runners() -> None:
    assert _served("lib-1.0-cp312-cp312-musllinux_1_2_aarch64.whl")["linux-aarch64"] == ()


def test_a_wheel_for_a_newer_glibc_or_macos_than_the_runners_is_not_theirs() -> None:
    assert _served("lib-1.0-cp312-cp312-manylinux_2_41_x86_64.whl")["linux-x86_64"] == ()
    assert _served("lib-1.0-cp312-cp312-macosx_15_0_arm64.whl")["macos-arm64"] == ()
    universal = (
        "lib-1.0-cp312-cp312-macosx_10_15_x86_64.macosx_11_0_arm64.macosx_10_15_universal2.whl"
    )
    assert _served(universal)["macos-arm64"] == ("3.12",)


def test_pure_python_wheels_and_sdists_serve_nothing() -> None:
    served = _served("lib-1.0-py3-none-any.whl", "lib-1.0.tar.gz")
    assert all(pythons == () for pythons in served.values())


def test_releases_are_final_unyanked_and_newest_first() -> None:
    files = [
        IndexFile("lib-1.2.0-cp312-cp312-manylinux_2_17_x86_64.whl"),
        IndexFile("lib-1.10.0-cp312-cp312-manylinux_2_17_x86_64.whl", uploaded="2026-03-01T10:00Z"),
        IndexFile("lib-1.10.0.tar.gz", uploaded="2026-02-28T09:00Z"),
        IndexFile("lib-2.0.0rc1-cp312-cp312-manylinux_2_17_x86_64.whl"),
        IndexFile("lib-1.11.0-cp312-cp312-manylinux_2_17_x86_64.whl", yanked=True),
        IndexFile("lib-1.12.0.dev3.tar.gz"),
        IndexFile("not-a-distribution.txt"),
    ]
    found = releases(files, ("3.12",))
    assert [str(r.version) for r in found] == ["1.10.0", "1.2.0"]
    assert found[0].uploaded == "2026-02-28"  # its first file's day


def test_the_json_and_html_forms_of_a_project_page() -> None:
    page = {
        "meta": {"api-version": "1.1"},
        "files": [
            {"filename": "a-1.0.tar.gz", "yanked": False, "upload-time": "2026-01-02T03:04:05Z"},
            {"filename": "a-0.9.tar.gz", "yanked": "broken"},
        ],
    }
    assert parse_json_page(page) == [
        IndexFile("a-1.0.tar.gz", False, "2026-01-02T03:04:05Z"),
        IndexFile("a-0.9.tar.gz", True, None),
    ]
    html = (
        '<html><body><a href="../../a-1.0.tar.gz#sha256=00">a-1.0.tar.gz</a>'
        '<a href="x" data-yanked="">a-0.9.tar.gz</a></body></html>'
    )
    assert parse_html_page(html) == [IndexFile("a-1.0.tar.gz"), IndexFile("a-0.9.tar.gz", True)]


def test_python_names() -> None:
    assert split_python("3.14t") == ((3, 14), True)
    assert split_python("3.10") == ((3, 10), False)
    with pytest.raises(SerkitError, match="not a Python version"):
        split_python("3.x")


def test_this_machine_and_the_runner_kinds() -> None:
    assert platform_here("Linux", "x86_64").name == "linux-x86_64"  # type: ignore[union-attr]
    assert platform_here("Linux", "aarch64").name == "linux-aarch64"  # type: ignore[union-attr]
    assert platform_here("Darwin", "arm64").name == "macos-arm64"  # type: ignore[union-attr]
    assert platform_here("Windows", "AMD64") is None


def test_project_urls() -> None:
    assert project_url("https://pypi.org/simple", "cbor2") == "https://pypi.org/simple/cbor2/"
    assert project_url("http://127.0.0.1:8/simple/", "x") == "http://127.0.0.1:8/simple/x/"


def test_a_pure_wheel_serves_the_pythons_its_requires_python_admits() -> None:
    (release,) = releases(
        [IndexFile("lib-1.0-py3-none-any.whl", requires_python=">=3.12")], PYTHONS
    )
    assert release.pure == ("3.12", "3.13", "3.14", "3.14t") and not release.has_wheels
    (release,) = releases([IndexFile("lib-1.0-py2.py3-none-any.whl")], ("3.10",))
    assert release.pure == ("3.10",)  # no Requires-Python: every Python 3


def test_exact_pins_are_what_every_install_gets() -> None:
    metadata = (
        "Metadata-Version: 2.4\n"
        "Name: pydantic\n"
        "Requires-Dist: annotated-types>=0.6.0\n"
        "Requires-Dist: pydantic_core==2.50.5\n"
        "Requires-Dist: email-validator==2.0.0; extra == 'email'\n"
        "Requires-Dist: tzdata==2024.1; python_version >= '3.9' and platform_system == 'Windows'\n"
        "Requires-Dist: not a requirement ((\n"
    )
    assert exact_pins(metadata) == {"pydantic-core": "2.50.5"}


def test_a_wheels_metadata_is_read_from_the_index_or_from_the_wheel(tmp_path: Path) -> None:
    import zipfile

    text = "Metadata-Version: 2.1\nName: lib\nRequires-Dist: core==1.2\n"
    wheel = tmp_path / "lib-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("lib/__init__.py", "")
        archive.writestr("lib-1.0.dist-info/METADATA", text)
    url = wheel.as_uri() + "#sha256=00"
    assert fetch_metadata(IndexFile(wheel.name, url=url)) == text
    # PEP 658: the index serves it beside the wheel, and the wheel is not read.
    (tmp_path / (wheel.name + ".metadata")).write_text(text.replace("1.2", "1.3"))
    assert "core==1.3" in fetch_metadata(IndexFile(wheel.name, url=url, has_metadata=True))
    broken = tmp_path / "lib-2.0-py3-none-any.whl"
    broken.write_bytes(b"not a zip")
    with pytest.raises(SerkitError, match="is not a wheel"):
        fetch_metadata(IndexFile(broken.name, url=broken.as_uri()))


def test_both_page_forms_give_each_files_address_and_requires_python() -> None:
    page = {
        "files": [
            {
                "filename": "a-1.0-py3-none-any.whl",
                "url": "../../packages/a-1.0-py3-none-any.whl",
                "requires-python": ">=3.10",
                "core-metadata": {"sha256": "00"},
            }
        ]
    }
    (parsed,) = parse_json_page(page, "https://pypi.org/simple/a/")
    assert parsed.url == "https://pypi.org/packages/a-1.0-py3-none-any.whl"
    assert (parsed.requires_python, parsed.has_metadata) == (">=3.10", True)
    html = (
        '<a href="../../packages/a-1.0-py3-none-any.whl#sha256=00" '
        'data-requires-python="&gt;=3.10" data-dist-info-metadata="sha256=00">'
        "a-1.0-py3-none-any.whl</a>"
    )
    (parsed,) = parse_html_page(html, "https://pypi.org/simple/a/")
    assert parsed.url == "https://pypi.org/packages/a-1.0-py3-none-any.whl#sha256=00"
    assert (parsed.requires_python, parsed.has_metadata) == (">=3.10", True)
