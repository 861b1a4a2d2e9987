from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import msgpack
import pytest
import yaml

from serkit.errors import DocumentError
from serkit.inputs.documents import (
    DEFAULT_MAX_BYTES,
    MAX_BYTES_ENV,
    looks_like_pickle,
    max_bytes_from_env,
    parse_size,
    read_document,
)

DOC: dict[str, Any] = {"id": 7, "name": "Zoë", "tags": ["a", "b"], "ratio": 0.25, "none": None}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "encode", "fmt"),
    [
        ("doc.json", lambda o: json.dumps(o).encode(), "json"),
        ("doc.JSON", lambda o: json.dumps(o).encode(), "json"),
        ("doc.yaml", lambda o: yaml.safe_dump(o, allow_unicode=True).encode(), "yaml"),
        ("doc.yml", lambda o: yaml.safe_dump(o).encode(), "yaml"),
        ("doc.msgpack", msgpack.packb, "msgpack"),
        ("doc.mpk", msgpack.packb, "msgpack"),
    ],
)
def test_each_format_is_read_by_its_extension(
    tmp_path: Path, name: str, encode: Any, fmt: str
) -> None:
    document = read_document(_write(tmp_path / name, encode(DOC)))
    assert (document.format, document.recognised_by, document.obj) == (fmt, "extension", DOC)
    assert document.bytes == (tmp_path / name).stat().st_size


@pytest.mark.parametrize(
    ("encode", "fmt"),
    [
        (lambda o: json.dumps(o).encode(), "json"),
        (msgpack.packb, "msgpack"),
        (lambda o: yaml.safe_dump(o, allow_unicode=True).encode(), "yaml"),
    ],
)
def test_an_unknown_extension_is_sniffed(tmp_path: Path, encode: Any, fmt: str) -> None:
    document = read_document(_write(tmp_path / "export.dat", encode(DOC)))
    assert (document.format, document.recognised_by, document.obj) == (fmt, "content", DOC)


def test_msgpack_keeps_int_keys(tmp_path: Path) -> None:
    path = _write(tmp_path / "ints.msgpack", msgpack.packb({1: "one", 2: [b"\x00"]}))
    assert read_document(path).obj == {1: "one", 2: [b"\x00"]}


def test_a_pickle_is_refused_without_the_flag_and_says_why(tmp_path: Path) -> None:
    for name in ("doc.pkl", "doc.pickle", "no-extension"):
        path = _write(tmp_path / name, pickle.dumps(DOC, protocol=4))
        with pytest.raises(DocumentError, match=r"is a pickle; loading a pickle runs code"):
            read_document(path)
        assert read_document(path, allow_pickle=True).obj == DOC


def test_a_refused_pickle_is_never_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def loads(data: bytes) -> Any:
        raise AssertionError("pickle.loads ran")

    monkeypatch.setattr(pickle, "loads", loads)
    with pytest.raises(DocumentError, match="is a pickle"):
        read_document(_write(tmp_path / "doc.bin", pickle.dumps(DOC, protocol=5)))


def test_pickle_sniffing_needs_a_protocol_header_and_a_stop() -> None:
    assert looks_like_pickle(pickle.dumps([1, 2], protocol=2))
    assert looks_like_pickle(pickle.dumps([1, 2], protocol=5))
    assert not looks_like_pickle(b"\x80\x05 truncated")
    assert not looks_like_pickle(b'{"a": 1}')


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    path = _write(tmp_path / "evil.yaml", b"!!python/object/apply:os.system ['true']\n")
    with pytest.raises(DocumentError, match=r"evil.yaml is not valid yaml: ConstructorError"):
        read_document(path)


def test_a_document_no_reader_can_read_names_what_was_tried(tmp_path: Path) -> None:
    path = _write(tmp_path / "notes.txt", b"just a sentence, not data\n")
    with pytest.raises(DocumentError) as caught:
        read_document(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: no reader can read it (tried json: ")
    assert "msgpack: " in message and "yaml: the text is one str, not a document" in message
    assert "\n" not in message


def test_a_broken_file_with_a_known_extension_names_its_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "broken.json", b'{"a": 1,')
    with pytest.raises(DocumentError, match=r"broken.json is not valid json: JSONDecodeError"):
        read_document(path)


def test_missing_empty_and_folder_paths_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"nope.json: no such file$"):
        read_document(tmp_path / "nope.json")
    with pytest.raises(DocumentError, match=r"empty.json is empty$"):
        read_document(_write(tmp_path / "empty.json", b""))
    with pytest.raises(DocumentError, match=r"is a folder, not a document$"):
        read_document(tmp_path)


def test_a_2_gb_file_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as stream:
        stream.truncate(2 * 10**9)  # sparse: no disk is used

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(Path, "open", never)
    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    with pytest.raises(DocumentError) as caught:
        read_document(big)
    assert str(caught.value) == (
        f"{big} is 1.86 GiB, over the 256 MiB limit for a document; to raise it, set "
        f"{MAX_BYTES_ENV} (e.g. {MAX_BYTES_ENV}=4GiB)"
    )


def test_the_limit_is_raised_by_the_environment_or_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "doc.json", json.dumps(DOC).encode())
    size = path.stat().st_size
    with pytest.raises(DocumentError, match=r"over the 10 B limit"):
        read_document(path, max_bytes=10)
    monkeypatch.setenv(MAX_BYTES_ENV, "10")
    with pytest.raises(DocumentError, match=r"over the 10 B limit"):
        read_document(path)
    monkeypatch.setenv(MAX_BYTES_ENV, "1 kB")
    assert read_document(path).obj == DOC
    assert read_document(path, max_bytes=size).obj == DOC  # the limit itself is allowed


def test_sizes_are_read_with_their_units(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_size("1000000") == 10**6
    assert parse_size("512 MB") == 512 * 10**6
    assert parse_size("4GiB") == 4 * 2**30
    assert parse_size("1.5 kib") == 1536
    for bad in ("", "lots", "5 parsecs", "-3"):
        with pytest.raises(DocumentError, match="is not a size"):
            parse_size(bad)
    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    assert max_bytes_from_env() == DEFAULT_MAX_BYTES
    monkeypatch.setenv(MAX_BYTES_ENV, "huge")
    with pytest.raises(DocumentError, match=rf"^{MAX_BYTES_ENV}: 'huge' is not a size"):
        max_bytes_from_env()


def test_a_forced_format_overrides_the_extension(tmp_path: Path) -> None:
    path = _write(tmp_path / "doc.json", yaml.safe_dump(DOC).encode())
    with pytest.raises(DocumentError, match="not valid json"):
        read_document(path)
    assert read_document(path, format="yaml").recognised_by == "caller"
    with pytest.raises(DocumentError, match="unknown document format 'toml'"):
        read_document(path, format="toml")
