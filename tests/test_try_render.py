"""`serkit try`'s table at its edges: long paths in the fidelity column, scattered timings."""

from __future__ import annotations

from serkit.checks.fidelity import EXACT, LOSSY, Difference, FidelityResult
from serkit.suite.cases import COMPRESSORS
from serkit.trial.render import FIDELITY_WIDTH, render, timing_text, wrapped
from serkit.trial.timings import Timing
from serkit.trial.trials import CodecTrial, DocumentTrial

# A path as `serkit try` met it on an AWS document: its table broke it as ['resources\n'].
PATH = "['resources']['DhcpOptions']['Properties']['DomainNameServers'][0]"
DETAIL = f"value-changed: 3, first at {PATH}"


def _trial(codec: str, seconds: float, status: str = EXACT, detail: str = "") -> CodecTrial:
    changed = (Difference("value-changed", 3, PATH),) if status == LOSSY else ()
    fidelity = FidelityResult(codec, "doc.json", status, changed, bytes=100, detail=detail)
    timing = Timing(tuple(seconds * f for f in (0.99, 1.0, 1.0, 1.01)), 100)
    return CodecTrial(
        codec, "json", "lib", fidelity, False, timing, timing, dict.fromkeys(COMPRESSORS, 100)
    )


def _document() -> DocumentTrial:
    codecs = (_trial("json", 4e-6), _trial("protobuf", 1e-6, LOSSY, DETAIL))
    return DocumentTrial("doc.json", "json", 1000, None, codecs, 1.0, 5.0, 15, 2.0, None, "")


def test_a_path_wraps_between_its_keys_never_inside_one() -> None:
    lines = wrapped(DETAIL, 30).splitlines()
    assert "".join(line.strip() for line in lines).replace("at[", "at [") == DETAIL
    assert lines == [
        "value-changed: 3, first at",
        "['resources']['DhcpOptions']",
        "['Properties']",
        "['DomainNameServers'][0]",
    ]
    for line in lines:  # every key whole: as many ' on each line as keys open there
        assert line.count("'") % 2 == 0 and len(line) <= 30


def test_a_key_longer_than_the_column_stands_whole_on_its_line() -> None:
    key = "['" + "x" * 40 + "']"
    assert wrapped(f"at {key}[1]", 20).splitlines() == ["at", key, "[1]"]
    assert wrapped("exact", 20) == "exact"
    assert wrapped("", 20) == ""


def test_the_fidelity_column_of_the_table_wraps_at_path_boundaries() -> None:
    out = render([_document()])
    assert "['resources\n" not in out and "['resources']" in out
    lines = out.splitlines()
    top = next(i for i, line in enumerate(lines) if line.split()[:2] == ["codec", "impl"])
    bottom = lines.index("", top)
    at = lines[top].index("fidelity")
    column = [line[at:].rstrip() for line in lines[top + 2 : bottom]]
    assert all(len(cell) <= FIDELITY_WIDTH for cell in column)
    assert any(cell.startswith("['") for cell in column)  # a wrapped line opens on a key
    markdown = render([_document()], markdown=True)
    assert PATH in markdown  # a Markdown cell is one line: nothing wrapped there


def test_a_timing_with_a_huge_spread_is_not_shown_as_a_value() -> None:
    scattered = Timing((1e-3, 1.2e-3, 2.5e-3, 30e-3, 40e-3))  # cattrs-orjson ±743 % under load
    assert timing_text(scattered) == "too scattered (2.50 ms ±576 %)"
    assert timing_text(Timing((1e-3, 1.1e-3, 1.2e-3, 1.3e-3, 1.4e-3))) == "1.20 ms ±8 %"
    legend = "too scattered: half the interquartile range is over 50 % of the median"
    assert legend in render([_document()])


def test_a_codec_timed_by_its_first_call_only_is_not_ranked_against_sampled_ones() -> None:
    # With --budget 6 on twitter, orjson was sampled and msgspec-json only prepared: the
    # verdict read "orjson 5.84x faster (untested) than msgspec-json", a cold call's time.
    cold = Timing((5e-6,), first_call_only=True)
    fidelity = FidelityResult("msgspec-json", "doc.json", EXACT, bytes=100)
    unsampled = CodecTrial(
        "msgspec-json", "json", "lib", fidelity, False, cold, cold, dict.fromkeys(COMPRESSORS, 100)
    )
    document = _document()
    document = DocumentTrial(
        "doc.json", "json", 1000, None, (*document.codecs, unsampled), 1.0, 6.0, 15, 2.0, None, ""
    )
    text = render([document])
    verdict = text.split("\n\n")[1]
    assert "fastest exact, by round trip (dumps + loads): json (8.00 µs)" in verdict
    assert "msgspec-json (its first call only: not sampled within the time budget)" in verdict
    assert "faster than msgspec-json" not in verdict and "untested" not in verdict
    assert "1 codec was not sampled within the 6.00 s budget, so not ranked" in " ".join(
        verdict.split()
    )
    assert "5.00 µs (1st call)" in text  # the table still shows what was timed


def test_a_run_with_an_injected_slowdown_says_so_in_its_heading() -> None:
    plain = _document()
    injected = DocumentTrial(
        "doc.json", "json", 1000, None, plain.codecs, 1.0, 5.0, 15, 2.0, None, "", injected=0.1
    )
    assert "injected" not in render([plain]).splitlines()[0]
    assert (
        "every call slowed by an injected 10 % (SERKIT_BENCH_INJECT)"
        in (render([injected]).splitlines()[0])
    )
