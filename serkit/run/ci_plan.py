"""The CI workflow proved before it runs: `serkit matrix --ci-plan`.

The workflow (.github/workflows/bench.yml) runs one job per runner kind and shard, each
uploading its results under a name of its own, and a publish job that downloads them by
a pattern and merges them into the store. Nothing on GitHub checks that these fit
together until a run of many runner-hours fails at its end, so this reads the workflow
as data and checks, against the matrix of the releases file:

- its bench matrix expands to every runner kind serkit knows (serkit.run.index), each
  with shards 1 to N, named K/N in the job's name and its `--shard`;
- every environment of a runner kind lands in exactly one of its shards, and no shard
  is empty (an empty shard fails its job: serkit.run.planning);
- every job's results artifact has a name of its own, the publish job's pattern matches
  each of them and nothing else uploaded, and the merge reads each downloaded folder;
- the sentinel runs in exactly one job of each runner kind.

GitHub's expressions are read only as far as this workflow uses them: `${{ matrix.X }}`
in names, `--shard` and `env`, and `matrix.X == N` in an `if`.
"""

from __future__ import annotations

import fnmatch
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.errors import SerkitError
from serkit.run.index import PLATFORMS
from serkit.run.matrix import MatrixEnvironment, environments
from serkit.run.releases import Releases
from serkit.run.shards import BadShard, Shard, shard_slice

WORKFLOW = Path(".github/workflows/bench.yml")
BENCH_JOB = "bench"
PUBLISH_JOB = "publish"
MATRIX_EXPRESSION = re.compile(r"\$\{\{\s*matrix\.(\w+)\s*\}\}")
SHARD_ARGUMENT = re.compile(r"--shard\s+\"?([^\"\s]+)\"?")
SHARD_IF = re.compile(r"^\s*(?:\$\{\{)?\s*matrix\.(\w+)\s*==\s*'?(\w+)'?\s*(?:\}\})?\s*$")


class BadWorkflow(SerkitError):
    """A workflow file this check cannot read as the bench workflow."""


@dataclass(frozen=True)
class Job:
    """One job of the bench matrix, as the workflow would run it."""

    runner: str
    name: str
    shard: Shard | None
    environments: tuple[MatrixEnvironment, ...]
    artifact: str | None  # its results' upload name
    sentinel: bool


@dataclass
class CiPlan:
    jobs: list[Job]
    merged: list[str]  # the artifacts the publish job downloads and merges
    problems: list[str] = field(default_factory=list)


def _expand(text: str, values: Mapping[str, Any]) -> str:
    return MATRIX_EXPRESSION.sub(lambda m: str(values.get(m[1], m[0])), text)


def _steps(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    steps = job.get("steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _runs(step: Mapping[str, Any], command: str) -> bool:
    return command in str(step.get("run") or "")


def _applies(step: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Whether a step's `if` holds for this job: `matrix.X == N`; a condition on no
    matrix value (the runner's OS, `!cancelled()`) is taken to hold."""
    condition = step.get("if")
    if condition is None or "matrix." not in str(condition):
        return True
    match = SHARD_IF.match(str(condition))
    if match is None:
        raise BadWorkflow(f"an `if` this check cannot read: {condition!r}")
    return str(values.get(match[1])) == match[2]


def _combinations(matrix: Mapping[str, Any]) -> list[dict[str, Any]]:
    if "include" in matrix or "exclude" in matrix:
        raise BadWorkflow("the bench matrix has include or exclude: this check reads neither")
    keys = [k for k, v in matrix.items() if isinstance(v, list)]
    return [dict(zip(keys, combo)) for combo in itertools.product(*(matrix[k] for k in keys))]


def _job(values: Mapping[str, Any], bench: Mapping[str, Any], data: Releases) -> Job:
    runner = str(values.get("runner", ""))
    name = _expand(str(bench.get("name", "")), values)
    shard = None
    artifact = None
    sentinel = False
    for step in _steps(bench):
        if not _applies(step, values):
            continue
        if _runs(step, "serkit bench --matrix"):
            env = {k: _expand(str(v), values) for k, v in (step.get("env") or {}).items()}
            text = _expand(str(step["run"]), values)
            found = SHARD_ARGUMENT.search(text)
            if found is not None:
                given = found[1]
                if given.startswith("$"):
                    given = env.get(given.strip("${}"), given)
                shard = Shard.parse(given)
        if _runs(step, "serkit bench --sentinel"):
            sentinel = True
        uses = str(step.get("uses") or "")
        if uses.startswith("actions/upload-artifact"):
            upload = step.get("with") or {}
            if ".asv/results" in str(upload.get("path", "")):
                artifact = _expand(str(upload.get("name", "")), values)
    platform = next((p for p in PLATFORMS if p.runner == runner), None)
    envs: tuple[MatrixEnvironment, ...] = ()
    if platform is not None and shard is not None:
        envs = shard_slice(environments(platform=platform.name, data=data), shard)
    return Job(runner, name, shard, envs, artifact, sentinel)


def _downloads(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        step.get("with") or {}
        for step in _steps(job)
        if str(step.get("uses") or "").startswith("actions/download-artifact")
    ]


def read_workflow(text: str) -> dict[str, Any]:
    import yaml  # imported when a workflow is read: parsing the CLI stays light

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadWorkflow(f"not YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
        raise BadWorkflow("no jobs")
    jobs: dict[str, Any] = doc["jobs"]
    for needed in (BENCH_JOB, PUBLISH_JOB):
        if not isinstance(jobs.get(needed), dict):
            raise BadWorkflow(f"no {needed!r} job")
    return jobs


def ci_plan(text: str, data: Releases) -> CiPlan:
    """Every job the workflow's bench matrix expands to, what it would measure and upload,
    what the publish job merges, and every way they do not fit together."""
    jobs = read_workflow(text)
    bench, publish = jobs[BENCH_JOB], jobs[PUBLISH_JOB]
    matrix = (bench.get("strategy") or {}).get("matrix")
    if not isinstance(matrix, dict):
        raise BadWorkflow("the bench job has no strategy matrix")
    try:
        planned = [_job(values, bench, data) for values in _combinations(matrix)]
    except BadShard as exc:
        raise BadWorkflow(f"a job's shard: {exc}") from None
    problems: list[str] = []
    _check_runners(planned, problems)
    _check_shards(planned, data, problems)
    merged = _check_artifacts(planned, jobs, bench, publish, problems)
    return CiPlan(planned, merged, problems)


def _check_runners(planned: list[Job], problems: list[str]) -> None:
    runners = {job.runner for job in planned}
    for platform in PLATFORMS:
        if platform.runner not in runners:
            problems.append(f"runner kind {platform.runner} has no job")
    for runner in sorted(runners - {p.runner for p in PLATFORMS}):
        problems.append(f"runner {runner} is no runner kind serkit has a platform for")
    for runner in sorted(runners):
        sentinels = sum(job.sentinel for job in planned if job.runner == runner)
        if sentinels != 1:
            problems.append(f"{runner}: the sentinel runs in {sentinels} jobs, not 1")


def _check_shards(planned: list[Job], data: Releases, problems: list[str]) -> None:
    for platform in PLATFORMS:
        own = [job for job in planned if job.runner == platform.runner]
        if not own:
            continue
        missing = [job.name for job in own if job.shard is None]
        if missing:
            problems.append(f"no --shard in the bench step of: {', '.join(missing)}")
            continue
        counts = {job.shard.count for job in own if job.shard}
        indexes = sorted(job.shard.index for job in own if job.shard)
        if len(counts) != 1 or indexes != list(range(1, len(own) + 1)) or len(own) not in counts:
            problems.append(
                f"{platform.runner}: shards {indexes} of {sorted(counts)}: every K of 1..N once"
            )
        for job in own:
            if job.shard is not None and str(job.shard) not in job.name:
                problems.append(f"job {job.name!r} runs shard {job.shard}: its name says another")
            if not job.environments:
                problems.append(f"{platform.runner} shard {job.shard} has no environment")
        everything = list(environments(platform=platform.name, data=data))
        seen: dict[MatrixEnvironment, int] = {}
        for job in own:
            for env in job.environments:
                seen[env] = seen.get(env, 0) + 1
        twice = [env.label for env, n in seen.items() if n > 1]
        lost = [env.label for env in everything if env not in seen]
        if twice:
            problems.append(f"{platform.runner}: in more than one shard: {', '.join(twice)}")
        if lost:
            problems.append(f"{platform.runner}: in no shard: {', '.join(lost)}")


def _check_artifacts(
    planned: list[Job],
    jobs: Mapping[str, Any],
    bench: Mapping[str, Any],
    publish: Mapping[str, Any],
    problems: list[str],
) -> list[str]:
    names = [job.artifact for job in planned]
    if None in names:
        problems.append("a bench job uploads no results artifact (.asv/results)")
    uploaded = [n for n in names if n]
    doubled = sorted({n for n in uploaded if uploaded.count(n) > 1})
    if doubled:
        problems.append(f"artifact names shared by two jobs: {', '.join(doubled)}")
    # The matrix artifact the bench jobs read is the one the matrix job wrote.
    other = {
        str((step.get("with") or {}).get("name", ""))
        for name, job in jobs.items()
        if name != BENCH_JOB and isinstance(job, dict)
        for step in _steps(job)
        if str(step.get("uses") or "").startswith("actions/upload-artifact")
    }
    for wanted in _downloads(bench):
        if wanted.get("name") and str(wanted["name"]) not in other:
            problems.append(f"the bench jobs download {wanted['name']!r}, which no job uploads")
    needs = publish.get("needs")
    if BENCH_JOB not in ([needs] if isinstance(needs, str) else list(needs or [])):
        problems.append("the publish job does not wait for the bench jobs (needs: bench)")
    merges = [str(s.get("run")) for s in _steps(publish) if _runs(s, "serkit results merge")]
    merged: list[str] = []
    for download in _downloads(publish):
        pattern = str(download.get("pattern") or download.get("name") or "")
        if not pattern:
            continue
        merged = [n for n in uploaded if fnmatch.fnmatchcase(n, pattern)]
        strays = sorted(n for n in other if fnmatch.fnmatchcase(n, pattern))
        if strays:
            problems.append(f"the merge's pattern {pattern!r} also takes {', '.join(strays)}")
        if download.get("merge-multiple"):
            problems.append("merge-multiple mixes the shards' files in one folder before the merge")
        folder = str(download.get("path") or ".").rstrip("/")
        if not any(f"{folder}/*/" in run for run in merges):
            problems.append(f"no `serkit results merge` of each folder under {folder}/")
    unmerged = sorted(set(uploaded) - set(merged))
    if unmerged:
        problems.append(f"uploaded but never merged: {', '.join(unmerged)}")
    return merged


def plan_of(path: Path, data: Releases) -> CiPlan:
    try:
        text = path.read_text()
    except OSError as exc:
        raise SerkitError(f"cannot read {path}: {exc.strerror or exc}") from None
    return ci_plan(text, data)
