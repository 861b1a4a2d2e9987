"""Sizes that keep serkit readable. The command line stays thin: it parses, calls the layer
that does the work, prints what comes back and maps errors to exit statuses, so a long
function there is work that belongs lower down; and a module holds one subject
(docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import serkit

PACKAGE = Path(serkit.__file__).parent
# Counted from the `def` line through the last line of the body, decorators apart.
LONGEST_CLI_FUNCTION = 60


def long_functions(path: Path, most: int) -> list[tuple[str, int]]:
    """Each function in `path` over `most` lines: its name and line, and its length."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (f"{path.name}:{node.lineno} {node.name}", size)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (size := (node.end_lineno or node.lineno) - node.lineno + 1) > most
    ]


def test_no_function_of_the_command_line_is_over_sixty_lines() -> None:
    found = [
        item
        for path in sorted((PACKAGE / "cli").rglob("*.py"))
        for item in long_functions(path, LONGEST_CLI_FUNCTION)
    ]
    assert found == []


def test_a_function_is_counted_from_its_def_to_its_last_line(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LONGEST_CLI_FUNCTION - 1))
    path = tmp_path / "module.py"
    fits = f"@staticmethod\ndef fits() -> None:\n{body}\n"
    path.write_text(f"{fits}\n\ndef over() -> None:\n{body}\n    return None\n")
    assert long_functions(path, LONGEST_CLI_FUNCTION) == [("module.py:64 over", 61)]


LONGEST_MODULE = 550


def test_no_module_is_over_550_lines() -> None:
    """A module that long holds two subjects: split it where they part, not by its length."""
    lengths = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    over = {name: lines for name, lines in lengths.items() if lines > LONGEST_MODULE}
    assert over == {}
