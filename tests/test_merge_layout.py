"""`serkit results merge` and `serkit fixtures verify` on hostile folders (issue 56): only
asv's layout copied, each file read once and copied from that read, the store never
written through a link, and a merge cut short by kill -9 or a full disk left whole."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from results_factory import RUNNERS, shard_results
from test_guarded_writes import FullDisk, assert_all_parse, killed_at, snapshot
from test_merge import fake_discover

from serkit import files
from serkit.errors import FixtureChanged, FixtureSourceError, RefusedFile, SerkitError
from serkit.inputs import sources
from serkit.inputs.user_fixtures import add_document, declarations, read_declared
from serkit.results.merge import LINK, MergeError, merge
from serkit.results.noise import NOISE_FILE

X86 = next(iter(RUNNERS))


def test_only_asvs_layout_is_copied_and_the_rest_is_named(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not a result")
    source = shard_results(tmp_path / "artifact", X86, 1, 2)
    folder = source / X86
    os.link(secret, folder / "notes.txt")  # a hard link: a regular file, to anything
    (folder / "0123abcd-env;rm -rf.json").write_text("{}")  # not a name asv gives
    (folder / NOISE_FILE).write_text("pairs: 3\n")  # serkit's own record: kept
    store = tmp_path / "store"
    result = merge([source], store, fake_discover)
    kept = {p.name for p in (store / X86).iterdir()}
    assert "notes.txt" not in kept and "0123abcd-env;rm -rf.json" not in kept
    assert NOISE_FILE in kept and "machine.json" in kept
    assert not any(p.name == "notes.txt" for p in result.added)
    (named,) = [w for w in result.warnings if "not in asv's results layout" in w]
    assert "notes.txt" in named and "0123abcd-env;rm -rf.json" in named


def test_a_file_swapped_after_it_was_checked_is_never_read_again(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"not": "yours"}')
    source = shard_results(tmp_path / "artifact", X86, 1, 2)
    chosen = sorted((source / X86).glob("*-*.json"))[0]
    checked = chosen.read_bytes()

    def discover_and_swap(folder: Path) -> Path:
        # Discovery runs between planning and writing (2 s in life): the window of the race.
        for path in (source / X86).iterdir():
            if path.name != "machine.json" and path.suffix == ".json":
                path.unlink()
                path.symlink_to(secret)
        (source / X86 / "machine.json").write_text('{"machine": "swapped"}')
        return fake_discover(folder)

    store = tmp_path / "store"
    merge([source], store, discover_and_swap)
    copied = [p for p in (store / X86).iterdir() if p.name.startswith(chosen.name[:-5])]
    assert [p.read_bytes() for p in copied] == [checked]
    assert not any(b"yours" in p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert b"swapped" not in (store / X86 / "machine.json").read_bytes()


def test_a_machine_folder_swapped_for_a_link_after_its_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = shard_results(tmp_path / "victim", X86, 1, 2) / X86
    source = tmp_path / "artifact"
    source.mkdir()
    (source / X86).symlink_to(outside, target_is_directory=True)
    # The check that it is no link passed, as it would have before the swap.
    monkeypatch.setattr(Path, "is_symlink", lambda self: False)
    store = tmp_path / "store"
    result = merge([source], store, fake_discover)
    assert not (store / X86).exists() or not list((store / X86).iterdir())
    assert [w for w in result.warnings if "symbolic link" in w] == [
        f"left out {source / X86}: {LINK}"
    ]


def test_a_linked_machine_folder_in_the_store_is_refused(tmp_path: Path) -> None:
    outside, store = tmp_path / "outside", tmp_path / "store"
    outside.mkdir()
    store.mkdir()
    (store / X86).symlink_to(outside, target_is_directory=True)
    with pytest.raises(SerkitError, match="symbolic link"):
        merge([shard_results(tmp_path / "artifact", X86, 1, 2)], store, fake_discover)
    assert list(outside.iterdir()) == []


def test_a_link_at_a_stores_file_is_refused_not_written_through(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"machine": "mine"}')
    store = tmp_path / "store"
    (store / X86).mkdir(parents=True)
    (store / X86 / "machine.json").symlink_to(secret)
    with pytest.raises(SerkitError, match="symbolic link"):
        merge([shard_results(tmp_path / "artifact", X86, 1, 2)], store, fake_discover)
    assert secret.read_text() == '{"machine": "mine"}'


def test_a_merge_on_a_full_disk_leaves_the_store_as_it_was_and_completes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources_ = [shard_results(tmp_path / f"s{k}", X86, k, 2) for k in (1, 2)]
    clean = tmp_path / "clean"
    merge(sources_, clean, fake_discover)
    store = tmp_path / "store"
    merge(sources_[:1], store, fake_discover)
    for at in (1, 2, 4):
        before = snapshot(store)
        with monkeypatch.context() as patch:
            patch.setattr(files.os, "fdopen", FullDisk(at=at))
            with pytest.raises(OSError) as raised:
                merge(sources_[1:], store, fake_discover)
        assert raised.value.errno == errno.ENOSPC
        assert str(raised.value.filename).startswith(str(store))
        assert_all_parse(store)
        assert snapshot(store) == before  # all or none: the store as it was
        assert not [p for p in store.rglob(".*")]  # no temporary left
    merge(sources_[1:], store, fake_discover)
    assert snapshot(store).keys() == snapshot(clean).keys()


@pytest.mark.slow  # new interpreters, killed at each write
def test_a_merge_killed_at_any_write_leaves_whole_files_and_completes_again(
    tmp_path: Path,
) -> None:
    sources_ = [shard_results(tmp_path / f"s{k}", X86, k, 2) for k in (1, 2)]
    clean, store = tmp_path / "clean", tmp_path / "store"
    merge(sources_, clean, fake_discover)
    body = f"""
    from pathlib import Path
    from test_merge import fake_discover
    from serkit.results.merge import merge
    merge([Path(p) for p in {[str(s) for s in sources_]!r}], Path({str(store)!r}), fake_discover)
    """
    for at in (1, 3, 5, 7):  # of 7: 4 results files, machine.json, the host file, benchmarks.json
        shutil.rmtree(store, ignore_errors=True)
        assert killed_at(at, body) == -signal.SIGKILL, at
        assert_all_parse(store)
        assert killed_at(99, body) == 0  # run again: it completes
        assert snapshot(store) == snapshot(clean)


# --- fixtures verify ------------------------------------------------------------------------


def test_a_source_is_hashed_and_used_from_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    genuine = b'{"a": 1}'
    source = sources.Source("doc.json", "u", hashlib.sha256(genuine).hexdigest(), "MIT")
    (tmp_path / "doc.json").write_bytes(genuine)
    # A file swapped for another between the check and the read: any read by path after
    # the check would see this.
    monkeypatch.setattr(Path, "read_bytes", lambda self: b'{"outside": true}')
    assert sources.source_bytes(source, mirror=str(tmp_path)) == genuine


def test_a_source_that_is_a_link_is_refused(tmp_path: Path) -> None:
    genuine = b'{"a": 1}'
    (tmp_path / "real.json").write_bytes(genuine)
    (tmp_path / "doc.json").symlink_to(tmp_path / "real.json")
    source = sources.Source("doc.json", "u", hashlib.sha256(genuine).hexdigest(), "MIT")
    with pytest.raises(FixtureSourceError, match="symbolic link"):
        sources.source_bytes(source, mirror=str(tmp_path))


def test_a_declared_file_swapped_for_a_link_is_refused_not_hashed(tmp_path: Path) -> None:
    store = tmp_path / "user"
    document = tmp_path / "a.json"
    document.write_text("[1, 2]")
    add_document(document, where=store)
    (declared,) = declarations(store)
    secret = tmp_path / "secret.json"
    secret.write_text('{"secret": 1}')
    declared.file.unlink()
    declared.file.symlink_to(secret)
    with pytest.raises((RefusedFile, FixtureChanged)) as raised:
        read_declared(declared)
    assert hashlib.sha256(secret.read_bytes()).hexdigest()[:12] not in str(raised.value)


def test_a_refused_merge_writes_nothing(tmp_path: Path) -> None:
    source = shard_results(tmp_path / "artifact", X86, 1, 2)
    broken = sorted((source / X86).glob("*-*.json"))[0]
    broken.write_text(json.dumps({"version": 2, "params": {"machine": "other"}}))
    with pytest.raises(MergeError, match="nothing was written"):
        merge([source], tmp_path / "store", fake_discover)
    assert not (tmp_path / "store" / X86).exists()
