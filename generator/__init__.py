"""Dualboard: a static leaderboard for LLM benchmarks, scored under two gradings and compared answer by answer.

The package reads like its flow, each stage a subpackage that turns files into
files: ``intake`` (check submissions) → ``store`` (keep accepted runs) →
``grading`` (score every answer twice) → ``stats`` (compare the gradings) →
``render`` (pages and the site) → ``release`` (freeze a version and publish
it). :data:`LAYERS` says where every top-level module sits; an arrow may only
point down the flow, never back (tests/test_flow.py checks every import).
"""

__version__ = "0.1.0"
"""The one place the version is written: pyproject.toml reads it from here (``[tool.setuptools.dynamic]``)."""

REQUIREMENT = f"dualboard=={__version__}"
"""The pip requirement for exactly this Dualboard. A leaderboard that ``dualboard init`` scaffolds
installs it everywhere (workflows, README), and the How to submit page tells submitters to install
it, so a run is checked locally by the same code that grades it in CI."""

LAYERS = (
    (
        "__init__",
        "atomic",
        "build_cache",
        "csv_download",
        "errors",
        "kappa",
        "linear_regex",
        "names",
        "release_files",
        "safe_read",
        "scored_files",
        "workers",
    ),
    ("intake", "project"),
    ("store",),
    ("grading",),
    ("stats", "labelling"),
    ("render",),
    ("release",),
    ("pipeline", "importers", "scaffold", "simulation"),
    ("preview",),
    ("cli", "__main__"),
)
"""Every top-level module and subpackage of ``dualboard``, in flow order: each may import its own layer and the
layers before it, never a later one.

1. Foundations any stage may use: names, errors, atomic writes, safe reading, the content hashes that let a
   build skip work it already did (``build_cache``), and the files two stages share
   (``scored_files`` between grading and stats, a Parquet file per run; ``release_files`` between render and release,
   ``csv_download`` for every CSV offered to readers), and Cohen's κ (``kappa``), by which grading chooses its
   answer-key grader and stats reports agreement, and how many worker processes a stage spreads its work over
   (``workers``). They import only each other.
2. The stages, one layer each: intake, store, grading, stats, render, release. ``project`` (the leaderboard
   folder and its ``dualboard.yaml``) sits with intake, whose strict YAML reader it uses; ``labelling`` (the
   labelling page and its sampling design) sits with stats, which estimates agreement by that design and whose
   intervals the design uses.
3. What drives the stages and nobody imports: ``pipeline`` (runs them in order), ``importers`` (turn results
   published elsewhere into a leaderboard folder), ``scaffold`` (writes a new leaderboard folder), ``simulation``
   (writes simulated submissions); then ``preview`` (a pull request's board,
   built through the pipeline); and last the ``cli``.
"""
