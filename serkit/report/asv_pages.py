"""asv's own pages beside serkit's: `asv publish` of what serkit read and found sound.

asv reads a copy built from an allow-list (serkit.results.publishable), through a config
naming the checkout and that copy, and writes into a scratch folder: its pages are moved
beside the report only when it succeeded.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from serkit.checkout import ENV_DIR, branches_here, commits_on
from serkit.files import atomic_write
from serkit.results.publishable import publishable_copy
from serkit.results.tree import ResultsTree


def _unplotted(root: Path, tree: ResultsTree, branches: list[str]) -> str | None:
    """Why asv's pages show none of `tree`'s results, or None: asv plots a result at its
    commit on the checkout's branches, and a `try --into` tree's commit (the trial
    method's, serkit.trial.save) or another checkout's is on none of them."""
    measured = {m.commit for machine in tree.machines.values() for m in machine.measurements}
    plotted = commits_on(root, branches)
    if not measured or plotted is None or measured & plotted:
        return None
    commits = ", ".join(sorted(c[:8] for c in measured)[:3])
    return (
        f"asv plots each result at its commit on this checkout's branches "
        f"({', '.join(branches)}), and no results file's commit ({commits}) is on them"
    )


def asv_publish(
    root: Path,
    tree: ResultsTree,
    html_dir: Path,
    runner: Callable[[Path, list[str]], int],
    warnings: list[str],
) -> bool:
    """`asv publish` of what `tree` read soundly into `html_dir`, through a config naming both."""
    from serkit.run.matrix import asv_config

    config = asv_config()
    root = root.resolve()
    configured = config.get("branches")
    configured = [str(b) for b in configured] if isinstance(configured, list) else []
    branches = branches_here(root, configured)
    config.update(
        repo=str(root),
        benchmark_dir=str(root / "benchmarks"),
        env_dir=str(root / ENV_DIR),
        branches=branches,
    )
    unplotted = _unplotted(root, tree, branches)
    if unplotted:
        warnings.append(f"asv's pages show no results: {unplotted}")
    with tempfile.TemporaryDirectory(prefix="serkit-publish-") as scratch:
        # asv reads only what serkit read and found sound, and writes beside the report:
        # its pages are moved into place only when it succeeded.
        clean, pages = Path(scratch) / "results", Path(scratch) / "html"
        warnings += [f"asv's pages leave out {what}" for what in publishable_copy(tree, clean)]
        config.update(results_dir=str(clean), html_dir=str(pages))
        path = Path(scratch) / "asv.conf.json"
        atomic_write(path, json.dumps(config), sync=False)
        if runner(root, ["publish", "--config", str(path)]) != 0:
            return False
        shutil.move(str(pages), str(html_dir))
        return True
