from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import msgpack
import pytest
import yaml

from serkit.errors import DocumentError, DocumentLimitError
from serkit.inputs.documents import looks_like_pickle, read_document
from serkit.inputs.limits import (
    DEFAULT_MAX_BYTES,
    ENV,
    MAX_BYTES_ENV,
    Grant,
    LimitExceeded,
    Limits,
    Shape,
    granting,
    limits_from_env,
    limits_with,
    measure_tree,
    parse_size,
    python_contents,
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
        f"{big} is 1.86 GiB, over the 256 MiB limit for a document; to allow more, pass "
        f"--max-bytes 4GiB or set {MAX_BYTES_ENV}=4GiB"
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
    assert limits_from_env().bytes == DEFAULT_MAX_BYTES
    monkeypatch.setenv(MAX_BYTES_ENV, "huge")
    with pytest.raises(DocumentError, match=rf"^{MAX_BYTES_ENV}: 'huge' is not a size"):
        limits_from_env()


def test_a_forced_format_overrides_the_extension(tmp_path: Path) -> None:
    path = _write(tmp_path / "doc.json", yaml.safe_dump(DOC).encode())
    with pytest.raises(DocumentError, match="not valid json"):
        read_document(path)
    assert read_document(path, format="yaml").recognised_by == "caller"
    with pytest.raises(DocumentError, match="unknown document format 'toml'"):
        read_document(path, format="toml")


# --- what a document expands to (serkit.inputs.limits) ------------------------------------


def test_the_tree_of_a_shared_graph_is_counted_without_walking_it() -> None:
    leaf = ["lol"] * 9
    level = leaf
    for _ in range(8):
        level = [level] * 9  # 9 ** 9 "lol"s: the billion laughs, as PyYAML builds them
    shape = measure_tree({"top": level}, python_contents(), Limits(nodes=10**10, aliases=100))
    tree = sum(9**k for k in range(9)) + 9**9  # the lists, then the strings
    assert (shape.nodes, shape.depth, shape.aliases) == (2 + tree, 10, 8 * 8)
    with pytest.raises(LimitExceeded, match=r"^expands to more than 1,000 nodes \(the limit"):
        measure_tree(level, python_contents(), Limits(nodes=1000))
    with pytest.raises(LimitExceeded, match=r"^holds more than 10 shared references"):
        measure_tree(level, python_contents(), Limits(aliases=10))
    deep: list[Any] = []
    for _ in range(5):
        deep = [deep, deep]  # the depth reached through a shared container counts too
    assert measure_tree(deep, python_contents(), Limits()).depth == 6
    with pytest.raises(LimitExceeded, match=r"^nests deeper than 5 levels"):
        measure_tree(deep, python_contents(), Limits(depth=5))


def test_a_document_that_holds_itself_is_refused() -> None:
    loop: list[Any] = [1]
    loop.append({"back": loop})
    with pytest.raises(LimitExceeded, match=r"^refers to itself at \[1\]\['back'\]"):
        measure_tree(loop, python_contents(), Limits())


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: &a [x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b, *b]\n", "more than 30 nodes"),
        ("a: &a [x]\nb: [*a, *a, *a, *a, *a, *a]\n", "holds more than 5 shared references"),
        ("a: &a [[[x]]]\nb: [[*a]]\n", "nests deeper than 5 levels"),
        ("a: &a [1, *a]\n", "refers to itself at ['a'][1]"),
        # A merge counts what it merges, each time.
        ("m: &m {x: [1, 2, 3, 4, 5]}\nboth: {<<: [*m, *m, *m], y: 2}\n", "more than 30 nodes"),
    ],
)
def test_yaml_is_measured_before_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, reason: str
) -> None:
    path = _write(tmp_path / "doc.yaml", text.encode())

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an object was built")

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document", never)
    with pytest.raises(DocumentLimitError) as caught:
        read_document(path, limits=Limits(nodes=30, aliases=5, depth=5))
    assert str(caught.value).startswith(f"{path}: ") and reason in str(caught.value)


def test_the_limits_come_from_the_environment_or_the_caller_never_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "doc.json", json.dumps({"a": [[1, 2], [3]]}).encode())
    # The dict, its key, three lists and three ints.
    assert read_document(path).shape == Shape(nodes=8, depth=3, aliases=0)
    monkeypatch.setenv(ENV["nodes"], "7")
    with pytest.raises(DocumentLimitError, match=r"more than 7 nodes .*--max-nodes N or set"):
        read_document(path)
    assert read_document(path, limits=Limits(nodes=8)).obj == {"a": [[1, 2], [3]]}
    with granting(Grant(limits_with({"nodes": 8}))):  # what --max-nodes 8 sets
        assert read_document(path).shape is not None
    monkeypatch.setenv(ENV["depth"], "lots")
    with pytest.raises(DocumentError, match=r"^SERKIT_MAX_DOCUMENT_DEPTH: 'lots' is not a count"):
        read_document(path)


def test_a_document_too_deep_for_its_parser_is_refused_as_too_deep(tmp_path: Path) -> None:
    for name, data in (
        ("deep.json", b"[" * 100_000 + b"]" * 100_000),
        ("deep.msgpack", b"\x91" * 100_000 + b"\x90"),
    ):
        path = _write(tmp_path / name, data)
        with pytest.raises(DocumentLimitError, match=r"nests too deep for the \w+ reader to parse"):
            read_document(path, limits=Limits(depth=10**6))
    # Sniffed, a refusal is the answer: the file is JSON, and too deep.
    path = _write(tmp_path / "deep.dat", b"[" * 300 + b"]" * 300)
    with pytest.raises(DocumentLimitError, match="nests deeper than 256 levels"):
        read_document(path)


def test_a_pickle_is_measured_too_and_only_when_allowed(tmp_path: Path) -> None:
    shared = [list(range(10))] * 20
    path = _write(tmp_path / "doc.pickle", pickle.dumps({"rows": shared}))
    with pytest.raises(DocumentLimitError, match="expands to more than 100 nodes"):
        read_document(path, allow_pickle=True, limits=Limits(nodes=100))
    document = read_document(path, allow_pickle=True)
    assert document.shape is not None and document.shape.aliases == 19
    with pytest.raises(DocumentError, match="runs code"):
        read_document(path, limits=Limits(nodes=10**6))


# --- documents read, with a warning -------------------------------------------------------


def test_a_yaml_stream_is_read_as_a_list_of_its_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "k8s.yaml", b"---\nkind: A\n---\nkind: B\n---\n")
    document = read_document(path)
    assert document.obj == [{"kind": "A"}, {"kind": "B"}]  # the empty last one left out
    assert document.warnings == (f"{path}: 2 YAML documents, measured as a list",)
    assert capsys.readouterr().err == f"serkit: warning: {document.warnings[0]}\n"
    one = read_document(_write(tmp_path / "one.yaml", b"---\nkind: A\n---\n"))
    assert one.obj == {"kind": "A"} and one.warnings == ()
    assert read_document(_write(tmp_path / "none.yaml", b"# nothing\n")).obj is None


@pytest.mark.parametrize(
    ("name", "data", "warning"),
    [
        (
            "dup.json",
            b'{"a": {"k": 1, "k": 2}, "b": [{"x": 1, "x": 1}]}',
            "key 'k' appears more than once in the object at ['a'], and only its last value "
            "is measured; 2 objects repeat a key",
        ),
        (
            "dup.yaml",
            b"base: &b {x: 1}\nitem: {<<: *b, y: 1, y: 2}\n",
            "key 'y' appears more than once in the mapping at ['item'], and only its last "
            "value is measured",
        ),
        (
            "dup.msgpack",
            msgpack.packb([{"a": 1}]).replace(b"\x81\xa1a\x01", b"\x82\xa1a\x01\xa1a\x02"),
            "key 'a' appears more than once in the map at [0], and only its last value is measured",
        ),
    ],
)
def test_a_repeated_key_is_read_as_the_parser_reads_it_with_a_warning(
    tmp_path: Path, name: str, data: bytes, warning: str
) -> None:
    path = _write(tmp_path / name, data)
    document = read_document(path)
    assert document.warnings == (f"{path}: {warning}",)
    plain = {"dup.json": json.loads, "dup.yaml": yaml.safe_load, "dup.msgpack": msgpack.unpackb}
    assert document.obj == plain[name](data)  # the hook changes nothing the parser builds
