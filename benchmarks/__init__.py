"""serkit's asv suite. Thin by design: everything codec-specific lives in `serkit`.

A typo in SERKIT_BENCH_CODECS or SERKIT_BENCH_FIXTURES stops discovery here, with the
list of known ids, rather than running an empty grid.
"""

from serkit.suite.cases import Selection, preload

# Also builds the fixtures parsed from a fetched source once, here, before asv forks.
preload(Selection.from_env())
