"""The asv names of the suite's benchmarks that serkit reads back: declared once, here.

asv names a benchmark `<module>.<class>.<method>` after benchmarks/; tests check every
name below against asv's own discovery of the suite.
"""

from __future__ import annotations

DUMPS = "bench_time.Dumps.time_dumps"
LOADS = "bench_time.Loads.time_loads"
ROUND_TRIP = "bench_time.RoundTrip.time_round_trip"
# By the operation each one times (serkit.suite.preparation.Case.operation's names).
TIME = {"dumps": DUMPS, "loads": LOADS, "round_trip": ROUND_TRIP}

SIZE = "bench_size.EncodedSize.track_bytes"
COMPRESSED = "bench_size.CompressedSize.track_bytes"
# Memory per call, measured at the allocator, by operation ("dumps", "loads").
PEAK = {
    "dumps": "bench_memory.PeakMemory.track_dumps_peak",
    "loads": "bench_memory.PeakMemory.track_loads_peak",
}
ALLOCATIONS = {
    "dumps": "bench_memory.Allocations.track_dumps_allocations",
    "loads": "bench_memory.Allocations.track_loads_allocations",
}
MEMORY_CHECK = {
    "dumps": "bench_memory.MemoryCheck.track_dumps_sane",
    "loads": "bench_memory.MemoryCheck.track_loads_sane",
}
COMPILED = "bench_facts.Implementation.track_compiled"
ROUND_TRIP_EXACT = "bench_facts.Fidelity.track_exact"
# Of a lossy round trip: 1 when dict key order was all it lost (fidelity.KEY_ORDER_ONLY).
ROUND_TRIP_KEY_ORDER_ONLY = "bench_facts.KeyOrder.track_key_order_only"
# A schema codec's schema on a fixture: its sha256, as serkit.schemas.types.hash_number.
SCHEMA = "bench_facts.Schema.track_schema_sha256"
SCHEMA_SUPPLIED = "bench_facts.SchemaOrigin.track_user_supplied"  # 1: the user's, 0: derived
IMPORT = "bench_import.ImportTime.timeraw_import"

OVERHEAD = {
    "dumps": "bench_overhead.DumpsOverhead.time_dumps",
    "loads": "bench_overhead.LoadsOverhead.time_loads",
}

# Instructions per call, counted under valgrind (opt-in), by operation.
INSTRUCTIONS = {
    "dumps": "bench_instructions.Instructions.track_dumps",
    "loads": "bench_instructions.Instructions.track_loads",
}
# Estimated cycles per call (instructions plus weighted cache misses, under cachegrind's
# cache simulation), by operation: counted with the instructions, in their own unit.
CYCLES = {
    "dumps": "bench_instructions.Instructions.track_cycles_dumps",
    "loads": "bench_instructions.Instructions.track_cycles_loads",
}
CYCLES_UNIT = "estimated cycles"
# The modules whose benchmarks a matrix environment leaves to another that counts for it
# (serkit.run.matrix.counted): memory per call and the instruction counts.
COUNTED_MODULES = ("bench_memory", "bench_instructions")

# What `serkit try --into` files a trial under (serkit.trial.save): not the suite's, but
# read back as its are. Such a tree's commit is the hash of try's method, so two trials
# that share no commit were timed by different versions of that method.
TRY_PREFIX = "serkit_try."
TRY_TIME = {"dumps": f"{TRY_PREFIX}time_dumps", "loads": f"{TRY_PREFIX}time_loads"}
TRY_SIZE = f"{TRY_PREFIX}track_bytes"
