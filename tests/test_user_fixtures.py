from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import serkit.inputs.fixtures as fixtures
import serkit.inputs.user_fixtures as user_fixtures
from serkit.checks.fidelity import check_round_trip
from serkit.cli import main
from serkit.errors import DocumentError, FixtureChanged, NoSchema, SchemaChanged, SerkitError
from serkit.inputs.fixtures import content_hash, load_fixture
from serkit.inputs.limits import Grant, Limits, granting
from serkit.inputs.user_fixtures import (
    FOLDER,
    FOLDER_ENV,
    MANIFEST,
    USER_ORIGIN,
    add_document,
    declarations,
    declared_fixtures,
    default_name,
    fixture_id,
    folder,
)
from serkit.schemas import pinned
from serkit.schemas.derive import derive
from serkit.schemas.pinned import schema_pin
from serkit.schemas.supplied import from_json_schema
from serkit.schemas.types import SUPPLIED
from serkit.suite.preparation import prepare

REPO = Path(__file__).resolve().parents[1]
ORDERS: dict[str, Any] = {"orders": [{"id": 1, "total": 9.5}, {"id": 2, "total": 0.1}]}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


def _json_file(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _manifest(where: Path) -> dict[str, Any]:
    return json.loads((where / MANIFEST).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_adding_copies_the_document_and_pins_it_by_content_hash(
    tmp_path: Path, store: Path
) -> None:
    declared = add_document(
        _json_file(tmp_path / "orders.json", ORDERS), description="two orders", where=store
    )
    sha256 = content_hash(ORDERS)
    assert declared.sha256 == sha256
    assert declared.id == f"orders@{sha256[:8]}" == fixture_id("orders", sha256)
    assert declared.file == store / f"orders@{sha256[:8]}.json"
    assert json.loads(declared.file.read_text()) == ORDERS
    assert _manifest(store) == {
        "fixtures": {
            "orders": {
                "file": declared.file.name,
                "sha256": sha256,
                "file_sha256": hashlib.sha256(declared.file.read_bytes()).hexdigest(),
                "description": "two orders",
            }
        }
    }
    assert declared.about == f"two orders ({declared.size} B)"  # under 1 KiB: bytes
    assert not declared.slow and not declared.large
    built = declared.build()
    assert built == ORDERS and built is not declared.build()  # a new object on every build


def test_the_same_content_again_changes_nothing(tmp_path: Path, store: Path) -> None:
    first = add_document(_json_file(tmp_path / "orders.json", ORDERS), where=store)
    before = (store / MANIFEST).read_bytes()
    # The same data in another format is the same document: its content hash is equal.
    yaml_copy = tmp_path / "orders.yaml"
    yaml_copy.write_text("orders:\n- {id: 1, total: 9.5}\n- {id: 2, total: 0.1}\n")
    assert add_document(yaml_copy, name="orders", where=store) == first
    assert (store / MANIFEST).read_bytes() == before


def test_changed_content_under_a_declared_name_is_a_new_fixture_or_refused(
    tmp_path: Path, store: Path
) -> None:
    first = add_document(_json_file(tmp_path / "orders.json", ORDERS), where=store)
    changed = {"orders": [*ORDERS["orders"], {"id": 3, "total": 1.0}]}
    path = _json_file(tmp_path / "orders.json", changed)
    with pytest.raises(DocumentError) as caught:
        add_document(path, where=store)
    new_sha = content_hash(changed)
    assert f"orders is already declared as {first.id}" in str(caught.value)
    assert f"content sha256 is {new_sha[:12]}…" in str(caught.value)
    assert [d.id for d in declarations(store)] == [first.id]  # nothing was written

    second = add_document(path, replace=True, where=store)
    assert second.id == f"orders@{new_sha[:8]}" != first.id
    assert [d.id for d in declarations(store)] == [second.id]
    assert not first.file.exists()  # no entry refers to the old copy any more


def test_replace_deletes_only_a_copy_serkit_wrote_in_its_folder(
    tmp_path: Path, store: Path
) -> None:
    first = add_document(_json_file(tmp_path / "orders.json", ORDERS), where=store)
    # Someone edits fixtures.json by hand to name a file of theirs, in the folder.
    mine = store / "mine.json"
    mine.write_bytes(first.file.read_bytes())
    manifest = json.loads((store / MANIFEST).read_text())
    manifest["fixtures"]["orders"]["file"] = "mine.json"
    (store / MANIFEST).write_text(json.dumps(manifest))
    changed = {"orders": []}
    second = add_document(
        _json_file(tmp_path / "new.json", changed), name="orders", replace=True, where=store
    )
    assert second.file.is_file() and mine.read_bytes() == first.file.read_bytes()
    assert first.file.exists()  # no longer declared, but not named by the manifest replaced
    # A link in the folder under serkit's own name is not a copy serkit wrote either.
    target = tmp_path / "outside.json"
    target.write_text(json.dumps(changed))
    second.file.unlink()
    second.file.symlink_to(target)
    manifest = json.loads((store / MANIFEST).read_text())
    assert manifest["fixtures"]["orders"]["file"] == second.file.name
    with pytest.raises(SerkitError, match="leads outside"):
        add_document(
            _json_file(tmp_path / "third.json", ORDERS), name="orders", replace=True, where=store
        )
    assert target.is_file()


def test_a_declared_file_that_changed_is_refused_unread_naming_both_hashes(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = add_document(_json_file(tmp_path / "orders.json", ORDERS), where=store)
    declared.file.write_text(json.dumps({"orders": []}))

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a parser saw the changed bytes")

    monkeypatch.setattr(json, "loads", never)
    with pytest.raises(FixtureChanged) as caught:
        declared.build()
    now = hashlib.sha256(declared.file.read_bytes()).hexdigest()
    assert str(caught.value).startswith(
        f"{declared.file} has changed: its file sha256 is {now[:12]}…, "
        f"declared {declared.file_sha256 and declared.file_sha256[:12]}… for {declared.id}, "
        "so it was not read;"
    )


def test_content_that_parses_differently_from_its_pin_is_refused_naming_both_hashes(
    tmp_path: Path, store: Path
) -> None:
    declared = add_document(_json_file(tmp_path / "orders.json", ORDERS), where=store)
    manifest = _manifest(store)
    wrong = content_hash({"orders": []})
    manifest["fixtures"]["orders"]["sha256"] = wrong  # as a reader that parses otherwise would
    (store / MANIFEST).write_text(json.dumps(manifest))
    (edited,) = declarations(store)
    with pytest.raises(FixtureChanged) as caught:
        edited.build()
    assert str(caught.value).startswith(
        f"{declared.file} has changed: its content sha256 is {declared.sha256[:12]}…, "
        f"declared {wrong[:12]}… as {edited.id}"
    )


def test_a_declaration_without_file_sha256_is_refused_and_adding_it_again_pins_it(
    tmp_path: Path, store: Path
) -> None:
    path = _json_file(tmp_path / "orders.json", ORDERS)
    declared = add_document(path, where=store)
    manifest = _manifest(store)
    del manifest["fixtures"]["orders"]["file_sha256"]  # as serkit wrote it before
    (store / MANIFEST).write_text(json.dumps(manifest))
    (older,) = declarations(store)
    with pytest.raises(FixtureChanged, match=rf"^{older.id} pins no file_sha256"):
        older.build()
    assert add_document(path, where=store) == declared  # the same id, now pinned
    assert declarations(store)[0].build() == ORDERS


def test_a_pickle_needs_the_flag_on_every_read_and_the_declaration_never_grants_it(
    tmp_path: Path, store: Path
) -> None:
    path = tmp_path / "orders.pkl"
    path.write_bytes(pickle.dumps(ORDERS, protocol=5))
    with pytest.raises(DocumentError, match="runs code"):
        add_document(path, where=store)
    assert not store.exists()
    declared = add_document(path, allow_pickle=True, where=store)
    assert declared.file.suffix == ".pickle"
    assert "allow_pickle" not in _manifest(store)["fixtures"]["orders"]
    with pytest.raises(DocumentError, match="is a pickle; loading a pickle runs code"):
        declared.build()
    with granting(Grant(Limits(), allow_pickle=True)):  # what --allow-pickle sets
        assert declared.build() == ORDERS


def test_an_allow_pickle_key_in_the_manifest_is_refused(store: Path) -> None:
    store.mkdir()
    entry = {"file": "o.pickle", "sha256": "0" * 64, "file_sha256": "0" * 64}
    (store / MANIFEST).write_text(json.dumps({"fixtures": {"o": {**entry, "allow_pickle": True}}}))
    with pytest.raises(SerkitError, match="o: allow_pickle is refused: a file cannot allow"):
        declarations(store)


def test_a_document_the_hash_cannot_pin_is_refused(tmp_path: Path, store: Path) -> None:
    path = tmp_path / "tags.yaml"
    path.write_text("tags: !!set {a, b}\n")  # YAML's SafeLoader reads a set
    with pytest.raises(DocumentError, match="fixture_hash cannot hash set; a fixture may hold"):
        add_document(path, where=store)
    assert not store.exists()
    dated = tmp_path / "dated.yaml"
    dated.write_text("when: 2024-07-02\n")  # YAML reads a date: pinned like any value
    assert add_document(dated, where=store).build() == {"when": datetime.date(2024, 7, 2)}


def test_a_failed_manifest_write_leaves_the_folder_as_it_was(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = add_document(_json_file(tmp_path / "a.json", [1]), where=store)
    before = sorted(p.name for p in store.iterdir())
    real = user_fixtures.atomic_write

    def failing(path: Path, data: bytes) -> None:
        if path.name == MANIFEST:
            raise OSError("disk full")
        real(path, data)

    monkeypatch.setattr(user_fixtures, "atomic_write", failing)
    with pytest.raises(OSError, match="disk full"):
        add_document(_json_file(tmp_path / "b.json", [2]), where=store)
    assert sorted(p.name for p in store.iterdir()) == before
    assert [d.id for d in declarations(store)] == [first.id]


def test_names_are_checked_and_derived_from_the_file_name(tmp_path: Path, store: Path) -> None:
    assert default_name(Path("My Orders (v2).json")) == "My-Orders-v2"
    assert default_name(Path("???.json")) == "document"
    with pytest.raises(DocumentError, match="'a@b' is not a fixture name"):
        add_document(_json_file(tmp_path / "x.json", 1), name="a@b", where=store)


def test_a_malformed_manifest_is_an_error_when_read_and_a_warning_in_the_registry(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store.mkdir()
    (store / MANIFEST).write_text('{"fixtures": {"orders": {"file": "o.json", "sha256": "x"}}}')
    with pytest.raises(SerkitError, match=r"fixtures.json: orders: sha256 must be the document"):
        declarations(store)
    monkeypatch.setenv(FOLDER_ENV, str(store))
    assert declared_fixtures() == []
    assert capsys.readouterr().err.startswith("serkit: warning: your fixtures are left out: ")
    (store / MANIFEST).write_text("not json")
    with pytest.raises(SerkitError, match="cannot be read"):
        declarations(store)


def test_the_folder_is_the_environment_s_or_the_checkout_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert folder({FOLDER_ENV: str(tmp_path)}) == tmp_path.resolve()
    monkeypatch.chdir(REPO / "serkit")
    assert folder({}) == REPO / FOLDER
    monkeypatch.chdir(tmp_path)  # asv runs each benchmark in a temporary folder
    assert folder({}) is None
    assert folder({"ASV_CONF_DIR": str(REPO)}) == REPO / FOLDER


def test_declared_fixtures_join_the_registry(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = add_document(_json_file(tmp_path / "orders.json", ORDERS), where=store)
    monkeypatch.setenv(FOLDER_ENV, str(store))
    assert declared_fixtures() == [declared]
    fixture = fixtures._user_fixture(declared)  # as the registry adds it on import
    assert (fixture.name, fixture.sha256) == (declared.id, declared.sha256)
    assert fixture.origin == USER_ORIGIN
    assert fixture.description == declared.about
    monkeypatch.setitem(fixtures._FIXTURES, fixture.name, fixture)
    assert fixture.name in fixtures.fixture_names()
    assert load_fixture(declared.id) == ORDERS


def _fake_checkout(root: Path, obj: Any) -> str:
    """A checkout with one declared document, as `serkit fixtures add` leaves it."""
    (root / "benchmarks").mkdir(parents=True)
    (root / "asv.conf.json").write_text("{}")
    source = _json_file(root / "orders.json", obj)
    return add_document(source, where=root / FOLDER, pin_schema=schema_pin).id


def _python(code: str, cwd: Path, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != FOLDER_ENV}
    environ.update(env, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=environ, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_asv_grid_picks_up_the_checkout_s_documents_from_asv_s_temporary_folder(
    tmp_path: Path,
) -> None:
    big = {"rows": [{"n": i, "text": "x" * 100} for i in range(10_000)]}  # over 1 MB: large
    checkout = tmp_path / "checkout"
    declared = _fake_checkout(checkout, big)
    elsewhere = tmp_path / "asv-cwd"
    elsewhere.mkdir()
    code = (
        "import json\n"
        "from benchmarks.bench_time import Dumps\n"
        "from benchmarks.bench_memory import PeakMemory\n"
        "from serkit.suite.cases import Selection\n"
        "print(json.dumps([Dumps.params[1], PeakMemory.params[1],"
        " Selection().excludes('json', Dumps.params[1][-1])]))\n"
    )
    grid, memory, excluded = json.loads(_python(code, elsewhere, ASV_CONF_DIR=str(checkout)))
    assert grid[-1] == declared and grid[: len(fixtures.FIXTURES)] == list(fixtures.FIXTURES)
    assert memory[-1] == declared  # over 1 MB: its peak memory is measured too
    assert excluded is None  # in the default selection: under 10 MB is not slow


@pytest.mark.slow
def test_fixtures_list_and_verify_show_declared_documents(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    declared = _fake_checkout(checkout, ORDERS)
    serkit_cli = [sys.executable, "-m", "serkit", "fixtures"]
    environ = {k: v for k, v in os.environ.items() if k != FOLDER_ENV}
    listed = subprocess.run(
        [*serkit_cli, "list", "--format", "json"],
        cwd=checkout,
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert rows[declared]["origin"] == USER_ORIGIN
    assert rows[declared]["sha256"] == content_hash(ORDERS)
    verified = subprocess.run(
        [*serkit_cli, "verify", "--fixture", declared],
        cwd=checkout,
        env=environ,
        capture_output=True,
        text=True,
    )
    assert verified.returncode == 0, verified.stderr
    assert f"ok    {declared} (content sha256 {content_hash(ORDERS)[:12]}…, " in verified.stdout
    # Its schema is pinned beside the content hash, and checked with it.
    pin = rows[declared]["schema_sha256"]
    assert rows[declared]["schema"] == "derived" and pin == derive(ORDERS).sha256
    assert f"derived schema sha256 {pin[:12]}…)" in verified.stdout


def test_serkit_fixtures_add_declares_and_verify_fails_a_changed_copy(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(FOLDER_ENV, str(store))
    path = _json_file(tmp_path / "orders.json", ORDERS)
    assert main(["fixtures", "add", str(path), "--description", "two orders"]) == 0
    (declared,) = declarations(store)
    out = capsys.readouterr().out
    assert out.startswith(f"added: {declared.id} (")
    assert f"SERKIT_BENCH_FIXTURES={declared.id}" in out
    assert main(["fixtures", "add", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"already declared: {declared.id}")

    monkeypatch.setitem(fixtures._FIXTURES, declared.id, fixtures._user_fixture(declared))
    declared.file.write_text(json.dumps({"orders": []}))
    assert main(["fixtures", "verify", "--fixture", declared.id]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  {declared.id}: {declared.file} has changed" in out
    assert "--name orders --replace" in out


# --- the schema pinned beside the content hash --------------------------------------------

ORDERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "orders": {
            "type": "array",
            "items": {
                "title": "Order",
                "type": "object",
                "properties": {"id": {"type": "integer"}, "total": {"type": "number"}},
                "required": ["id"],
            },
        }
    },
    "required": ["orders"],
}


def test_adding_pins_the_derived_schema_and_the_registry_checks_it(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = add_document(
        _json_file(tmp_path / "orders.json", ORDERS), where=store, pin_schema=schema_pin
    )
    assert declared.schema_sha256 == derive(ORDERS).sha256 and declared.schema_file is None
    assert _manifest(store)["fixtures"]["orders"]["schema_sha256"] == declared.schema_sha256
    fixture = fixtures._user_fixture(declared)
    assert fixture.schema_sha256 == declared.schema_sha256 and fixture.supplied_schema is None
    monkeypatch.setitem(fixtures._FIXTURES, fixture.name, fixture)
    monkeypatch.setattr(pinned, "_DERIVED", {})
    assert pinned.fixture_schema(declared.id).sha256 == declared.schema_sha256
    # A schema codec on it runs under that pin, and the results record it.
    case = prepare("msgspec-struct-json", declared.id)
    assert case.schema_sha256 == declared.schema_sha256
    # A pin the inference no longer gives is named, never used.
    stale = dataclasses.replace(fixture, schema_sha256="0" * 64)
    monkeypatch.setitem(fixtures._FIXTURES, fixture.name, stale)
    monkeypatch.setattr(pinned, "_DERIVED", {})
    with pytest.raises(SchemaChanged, match="pinned 000000000000"):
        pinned.fixture_schema(declared.id)


def test_a_document_no_schema_fits_is_pinned_as_such(tmp_path: Path, store: Path) -> None:
    mixed = _json_file(tmp_path / "mixed.json", [1, "one"])
    declared = add_document(mixed, where=store, pin_schema=schema_pin)
    assert declared.schema_sha256 == fixtures.NO_SCHEMA_PIN == "no schema"


def test_a_schema_of_the_users_is_copied_pinned_and_read_for_the_schema_codecs(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema_path = _json_file(tmp_path / "orders.schema.json", ORDERS_SCHEMA)
    source = _json_file(tmp_path / "orders.json", ORDERS)
    declared = add_document(source, where=store, schema=schema_path, pin_schema=schema_pin)
    expected = from_json_schema(ORDERS_SCHEMA)
    assert declared.schema_sha256 == expected.sha256 != derive(ORDERS).sha256
    assert declared.schema_file is not None and declared.schema_file.parent == store
    assert declared.schema_file_sha256 == hashlib.sha256(schema_path.read_bytes()).hexdigest()
    assert declared.read_schema() == ORDERS_SCHEMA
    fixture = fixtures._user_fixture(declared)
    monkeypatch.setitem(fixtures._FIXTURES, fixture.name, fixture)
    monkeypatch.setattr(pinned, "_DERIVED", {})
    schema = pinned.fixture_schema(declared.id)
    assert schema.origin == SUPPLIED and schema.sha256 == declared.schema_sha256
    result = check_round_trip("pydantic-json", declared.id, ORDERS)
    assert result.status == "exact" and result.schema_sha256 == declared.schema_sha256
    # Its bytes are checked before it is parsed: a swapped file is refused unread.
    declared.schema_file.write_text(json.dumps({"type": "string"}))
    monkeypatch.setattr(pinned, "_DERIVED", {})
    with pytest.raises(FixtureChanged, match="has changed: its file sha256 is"):
        pinned.fixture_schema(declared.id)


def test_a_schema_the_document_does_not_fit_is_refused_and_nothing_is_written(
    tmp_path: Path, store: Path
) -> None:
    schema_path = _json_file(tmp_path / "orders.schema.json", ORDERS_SCHEMA)
    source = _json_file(tmp_path / "orders.json", {"orders": [{"id": "1"}]})
    with pytest.raises(NoSchema, match=r"does not fit the schema: \['orders'\]\[0\]\['id'\]"):
        add_document(source, where=store, schema=schema_path, pin_schema=schema_pin)
    assert not store.exists()
    not_json = tmp_path / "broken.schema.json"
    not_json.write_text("{")
    with pytest.raises(DocumentError, match="not a JSON Schema"):
        add_document(source, where=store, schema=not_json, pin_schema=schema_pin)


def test_another_schema_for_a_declared_document_needs_replace(tmp_path: Path, store: Path) -> None:
    source = _json_file(tmp_path / "orders.json", ORDERS)
    derived = add_document(source, where=store, pin_schema=schema_pin)
    schema_path = _json_file(tmp_path / "orders.schema.json", ORDERS_SCHEMA)
    with pytest.raises(DocumentError, match="another schema changes what its schema codecs"):
        add_document(source, where=store, schema=schema_path, pin_schema=schema_pin)
    theirs = add_document(
        source, where=store, schema=schema_path, pin_schema=schema_pin, replace=True
    )
    assert theirs.id == derived.id and theirs.schema_sha256 != derived.schema_sha256
    again = add_document(source, where=store, schema=schema_path, pin_schema=schema_pin)
    assert again == theirs  # the same schema again changes nothing
    back = add_document(source, where=store, pin_schema=schema_pin, replace=True)
    assert back.schema_file is None and theirs.schema_file is not None
    assert not theirs.schema_file.exists()  # no entry refers to it any more


def test_a_declaration_older_than_schema_pins_is_pinned_when_added_again(
    tmp_path: Path, store: Path
) -> None:
    source = _json_file(tmp_path / "orders.json", ORDERS)
    older = add_document(source, where=store)  # no schema pinned, as serkit did before
    assert older.schema_sha256 is None
    pinned_now = add_document(source, where=store, pin_schema=schema_pin)
    assert pinned_now.id == older.id and pinned_now.schema_sha256 == derive(ORDERS).sha256
    # Where no schema can be pinned (no inference library), the pinned one stays.
    assert add_document(source, where=store) == pinned_now


@pytest.mark.parametrize(
    ("entry", "refusal"),
    [
        ({"schema_sha256": "abc"}, "schema_sha256 must be"),
        ({"schema_file": "s.json"}, "schema_file and schema_file_sha256 go together"),
        (
            {"schema_file": "s.json", "schema_file_sha256": "0" * 64},
            "a schema_file needs its bytes' sha256",
        ),
    ],
)
def test_a_malformed_schema_entry_is_refused(
    store: Path, entry: dict[str, str], refusal: str
) -> None:
    store.mkdir()
    base = {"file": "x.json", "sha256": "0" * 64, "file_sha256": "0" * 64}
    (store / MANIFEST).write_text(json.dumps({"fixtures": {"x": {**base, **entry}}}))
    with pytest.raises(SerkitError, match=refusal):
        declarations(store)


def test_serkit_fixtures_add_takes_a_schema_and_says_what_it_pinned(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(FOLDER_ENV, str(store))
    path = _json_file(tmp_path / "orders.json", ORDERS)
    schema_path = _json_file(tmp_path / "orders.schema.json", ORDERS_SCHEMA)
    assert main(["fixtures", "add", str(path), "--schema", str(schema_path)]) == 0
    out = capsys.readouterr().out
    assert f"schema: user-supplied, sha256 {from_json_schema(ORDERS_SCHEMA).sha256}" in out
    bad = _json_file(tmp_path / "bad.schema.json", {"$ref": "#/x"})
    assert main(["fixtures", "add", str(path), "--schema", str(bad), "--replace"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("serkit: error: ") and "cannot say $ref" in err
    assert err.count("\n") == 1  # one line, no traceback
