"""serkit's asv suite. Thin by design: everything codec-specific lives in `serkit`.

A typo in SERKIT_BENCH_CODECS or SERKIT_BENCH_FIXTURES stops discovery here, with the
list of known ids, rather than running an empty grid.
"""

import sys

from serkit.suite.canary import notes_folder, prepare_memory
from serkit.suite.cases import Selection, preload

_selection = Selection.from_env()
# Builds the fixtures parsed from a fetched source once, before asv's forkserver forks:
# not while asv only lists the benchmarks (`benchmark.py discover`), which every `asv run`
# does first and which needs no document (0.3-0.7 s of parsing saved per run here).
if sys.argv[1:2] != ["discover"]:
    preload(_selection)
    if notes_folder() is not None:  # the memory canary's buffer, shared by every fork
        prepare_memory()
