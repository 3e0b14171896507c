"""Reference pages generated from the code: methodology appendix, how to submit, downloads.

Nothing here is copied by hand: column meanings come from
:data:`dualboard.stats.COLUMNS`, the submission formats from the JSON Schemas
that validation enforces (:mod:`dualboard.intake.schemas`; the example run from their examples), the
graders' rules from their code, the release files from their checksums.
"""

from __future__ import annotations

import json

import pandas as pd

from dualboard import REQUIREMENT
from dualboard.csv_download import download_csv
from dualboard.grading.registry import describe_graders
from dualboard.intake.example_run import example_run
from dualboard.intake.models import Benchmark
from dualboard.intake.schemas import load_schema
from dualboard.names import RUN_ID_RULE
from dualboard.release_files import (
    SITE_FILE_LIMIT,
    ReleaseError,
    ReleaseRecord,
    carried_in_site,
    hub_file_url,
    hub_folder,
    site_file,
)
from dualboard.release_files import TABLES as RELEASE_TABLES
from dualboard.render.answer_formats import ANSWER_FORMATS, APPLIES, SAMPLE_QUESTIONS, grade_example, outcome
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, code_block, link, table
from dualboard.render.numbers import (
    format_interval,
    format_mde,
    format_number,
    format_p,
    mde_sort_key,
    nothing_detectable_cause,
    sort_key,
)
from dualboard.render.pages import Appendix, BenchmarkResults, Page, front_matter
from dualboard.render.shared_files import SharedFiles, shared_folder, shared_href
from dualboard.stats import COLUMNS
from dualboard.stats.scores import MIN_COVERAGE
from dualboard.stats.tables import TABLES

SCHEMA_FILES = {
    "metadata.yaml": "metadata",
    "predictions.jsonl (one object per line)": "prediction",
    "questions.jsonl (benchmark maintainers)": "question",
    "benchmark.yaml (benchmark maintainers)": "benchmark",
}
EXAMPLE_LINES_SHOWN = 3
"""Lines of the example predictions.jsonl printed on the How-to-submit page."""


def methodology_appendix(results: list[BenchmarkResults]) -> Appendix:
    """Generated sections of methodology.md: power per benchmark, the flawed contrast, column meanings."""
    parts = [
        "\n\n## What these benchmarks can detect\n\n"
        "Minimum detectable difference (points) at 80 % power and two-sided α = 0.05, from power.csv. "
        "*all* rows are the median over runs or pairs, counting a comparison that can detect nothing as "
        "infinite: *nothing detectable* there means half or more of them can detect no difference, with the cause "
        "at their median number of questions. "
        "*Detecting* says how many can.\n\n"
    ]
    for r in results:
        parts.append(f"### {escape_text(r.benchmark.title)}\n\n" + _power_table(r.stats.power))
    parts.append(
        "\n## The flawed contrast, for comparison\n\n"
        '!!! warning "Flawed analysis: do not cite these p-values"\n'
        "    The first columns repeat EQUATOR's analysis: a paired t-test over the *run means*. It treats runs "
        "as the sample and ignores question-level noise. The last columns give the question-clustered pooled "
        "difference that answers the question properly.\n\n"
    )
    for r in results:
        parts.append(f"### {escape_text(r.benchmark.title)}\n\n" + _equator_table(r.stats.equator))
    parts.append(
        "\n## Columns of the downloadable tables {#columns}\n\n"
        "Every column of the statistics tables, as defined in the code (`generator/stats/columns.yaml`).\n\n"
    )
    for name, columns in COLUMNS.items():
        rows = [[Cell(c), Cell(str(m))] for c, m in columns.items()]
        parts.append(  # closed until asked for: a phone lays out hundreds of rows slowly
            f"### {escape_text(name)}.csv\n\n<details><summary>The {len(rows)} columns of "
            f"{escape_text(name)}.csv</summary>{table(['Column', 'Meaning'], rows, sortable=False).rstrip()}"
            "</details>\n\n"
        )
    return Appendix("methodology.md", "".join(parts))


def _power_table(power: pd.DataFrame) -> str:
    rows = [
        [
            Cell(str(r.comparison)),
            Cell(str(r.grading)),
            Cell(str(r.run_id)),
            Cell(str(r.n_questions), sort=sort_key(r.n_questions)),
            Cell(str(r.rounds), sort=sort_key(r.rounds)),
            Cell(
                format_mde(
                    r.mde_points, r.mde_status, nothing_detectable_cause(r.n_questions, str(r.method), r.n_discordant)
                ),
                sort=mde_sort_key(r.mde_points, r.mde_status),
            ),
            Cell(format_mde(r.mde_points_normal, r.mde_status), sort=mde_sort_key(r.mde_points_normal, r.mde_status)),
            Cell(f"{r.n_detectable} of {r.n_comparisons}", sort=sort_key(r.n_detectable)),
            Cell(str(r.method)),
        ]
        for r in power.itertuples(index=False)
    ]
    return table(
        [
            "Comparison",
            "Grading",
            "Run",
            "Questions",
            "Rounds",
            "MDE (points)",
            "MDE, normal approx.",
            "Detecting",
            "Method",
        ],
        rows,
    )


def _equator_table(equator: pd.DataFrame) -> str:
    rows = [
        [
            Cell(str(r.label)),
            Cell(str(int(r.n_runs))),
            Cell(format_number(r.flawed_diff_mean)),
            Cell(f"t({format_number(r.flawed_df, 0)}) = {format_number(r.flawed_t, 2)}"),
            Cell(format_p(r.flawed_p_value)),
            Cell(format_number(r.flawed_effect_dz, 2)),
            Cell(format_interval(r.pooled_diff_mean, r.pooled_ci_low, r.pooled_ci_high)),
            Cell(format_p(r.pooled_p_value)),
            Cell(str(int(r.pooled_n_questions))),
        ]
        for r in equator.itertuples(index=False)
    ]
    return table(
        [
            "What",
            "Runs",
            "Flawed: mean diff",
            "Flawed: t",
            "Flawed: p",
            "Flawed: dz",
            "Clustered pooled diff [95% CI]",
            "Clustered p",
            "Questions",
        ],
        rows,
        sortable=False,
    )


def submit_page(benchmarks: list[Benchmark]) -> Page:
    """How to submit a run: the steps, an example run to copy, what the graders read, then the schemas.

    The example run comes from the first benchmark's questions and the
    metadata schema's examples; the answer formats are graded by the real
    graders while the page is built; the rules come from the graders' code.
    """
    parts = [
        front_matter("How to submit"),
        "# How to submit a run\n\n",
        "1. Run the model on every question of the benchmark (and every round you report), keeping the raw text. "
        "Leave none out: a missing answer is refused, or where the benchmark allows incomplete runs it is scored "
        "wrong, and a run that answers under the benchmark's `min_answered` (90 % unless it says otherwise) is "
        "listed apart, not ranked.\n"
        "2. Create `submissions/<benchmark>/<run-id>/` in a fork of this repository. The run id is "
        f"{RUN_ID_RULE}.\n"
        "3. Write `metadata.yaml` and `predictions.jsonl` there: copy the example below and change what differs.\n"
        f'4. Check it locally with the Dualboard version that grades this leaderboard: `pip install "{REQUIREMENT}"`, '
        "then `dualboard validate submissions/<benchmark>/<run-id>` lists every problem in one "
        "pass, each as `file:line: field: problem — fix`, and changes nothing. Exit code 0 means valid.\n"
        "5. Open a pull request that adds this one folder and changes nothing else: a pull request may only add "
        "run folders (a change to another run, to any file outside the new folder, or a git file such as "
        "`.gitattributes` fails validation). To replace a run of yours, submit it under a new run id and ask a "
        "maintainer to withdraw the old one. The workflow validates it without secrets; once merged, the run is "
        "graded under both gradings and appears in the next build and release.\n\n"
        "Responses are shown on the site exactly as submitted, every character escaped. Name the model as it is "
        "published, in visible characters: a model already on the board needs a `model_revision` that differs from "
        "the other run's (the site then shows both, each with its revision), and a name that looks like another "
        "run's is refused.\n\n",
        _example_section(benchmarks),
        HARNESS_SECTION,
        _graders_section(benchmarks),
        "## Reference: the files and their fields\n\n"
        "Every field of each file, from the JSON Schemas that `dualboard validate` enforces.\n\n",
    ]
    for title, name in SCHEMA_FILES.items():
        schema = load_schema(name)
        parts.append(
            f"### {escape_text(title)}\n\n"
            + _schema_fields(schema)
            + f"\nThe JSON Schema (`{name}.schema.json`):\n\n"
            + code_block(json.dumps(schema, indent=2, ensure_ascii=False))
            + "\n"
        )
    return Page("submit.md", "".join(parts))


HARNESS_SECTION = (
    "## Ran Inspect AI or lm-evaluation-harness? One command writes the run folder\n\n"
    "If you evaluated with a harness, import its log instead of writing the files above by hand (steps 2 and 3). "
    "Each (model, task) in the log becomes `submissions/<task>/<model>/`; the task's name must be the "
    "benchmark's, or pass `--benchmark NAME`.\n\n"
    f'- **Inspect AI**: `pip install "{REQUIREMENT.replace("dualboard", "dualboard[inspect]", 1)}"`, then '
    "`dualboard import inspect logs/<log>.eval --submitter <your-handle>` (`.eval` or `.json` logs, several "
    "at once). Epochs become rounds; every scorer's value is kept as a recorded score, and the first scorer is "
    "the traditional grading.\n"
    "- **lm-evaluation-harness**: run `lm_eval` with `--log_samples --output_path out`, then "
    "`dualboard import lm-eval out --submitter <your-handle>`. lm-eval scores one text per question (its filter "
    "picks it from the repeats): that text is the answer, and every repeat is kept in `provenance.jsonl`. The "
    "task's first metric is "
    "the traditional grading. For a multiple-choice task the response is the option that metric picks (its "
    "letter and text) and the log-likelihoods are kept in `provenance.jsonl`.\n\n"
    "Answer-key grading re-grades every response against the answer keys, as for any run. The import checks the "
    "log's questions and targets against the benchmark and refuses a question that differs, naming it; it "
    "refuses a failed or cancelled evaluation, a sample that errored and a document without a target, and "
    "writes nothing then. Your run's page shows the number the harness reported beside the board's traditional "
    "mean: they are equal when the harness took the mean over rounds. Then go on with steps 4 and 5. If the "
    "import also wrote `data/benchmarks/<task>/` (this leaderboard has no such benchmark), leave that folder out "
    "of your pull request: a maintainer adds a benchmark in a pull request of its own, and until then your run "
    "fails the pull request's check for want of its benchmark.\n\n"
)
"""How to submit straight from a harness's log (``dualboard import inspect`` / ``import lm-eval``)."""


def _example_section(benchmarks: list[Benchmark]) -> str:
    """A complete run folder for the first benchmark: metadata.yaml whole, the first lines of predictions.jsonl."""
    if not benchmarks:
        return ""
    example = example_run(benchmarks[0])
    shown = EXAMPLE_LINES_SHOWN
    return (
        "## An example run to copy\n\n"
        f"A valid run of *{escape_text(benchmarks[0].title)}*, in <code>{escape_text(example.folder)}/</code>.\n\n"
        "`metadata.yaml`:\n\n"
        + code_block(example.metadata_yaml)
        + f"\n`predictions.jsonl`, the first {min(shown, len(example.prediction_lines))} of its "
        f"{len(example.prediction_lines)} lines: one JSON object per "
        "line, one line per question and round (`round` counts from 0 up to `rounds` − 1).\n\n"
        + code_block("\n".join(example.prediction_lines[:shown]))
        + "\n"
    )


def _graders_section(benchmarks: list[Benchmark]) -> str:
    """Which graders score each benchmark, what answer formats they read (graded live), and each one's rule."""
    used = {spec.name for b in benchmarks for spec in (*b.traditional.values(), *b.answer_key)}
    shown = [g for g in APPLIES if g in used] if benchmarks else list(APPLIES)
    parts = [
        "## What the graders read\n\n",
        "Every answer is scored twice: under the benchmark's *traditional* grading (its own way of marking, such as "
        "the option letter or a recorded judge's mark) and under *answer-key* grading (strictly against the human "
        "answer keys). The `graders` field of `benchmark.yaml` names the graders:\n\n",
    ]
    parts += [
        f"- *{escape_text(b.title)}*: traditional — {_grader_names(b.traditional)}; answer key — "
        f"{', '.join(escape_text(s.name) for s in b.answer_key)} (the first is primary).\n"
        for b in benchmarks
    ]
    parts.append(
        '\n**End every answer with a marked final answer** (`Final answer: …`, `{"ANSWER": "…"}` or '
        "`\\boxed{…}`). An answer a grader cannot read gets no verdict and is left out of that grading, and a run "
        f"under {MIN_COVERAGE:.0%} coverage is not ranked in it. Example responses, as the graders read them when "
        "this page was built. *Pass* scores 100 and *fail* 0; *fallback*: read by a looser rule, and flagged; "
        "*no verdict*: left out of that grading; *unreadable*: the model's failure, scored 0.\n\n"
    )
    for kind, question in SAMPLE_QUESTIONS.items():
        graders = [g for g in shown if kind in APPLIES[g]]
        if graders:
            rows = [
                [
                    Cell(ex.label),
                    Cell(ex.response, css_class="dualboard-response"),
                    *(Cell(outcome(grade_example(g, ex))) for g in graders),
                ]
                for ex in ANSWER_FORMATS
                if ex.kind == kind
            ]
            parts.append(
                f"*{escape_text(_sample_question(question))}*\n\n"
                + table(["Format", "Response", *graders], rows, sortable=False)
                + "\n"
            )
    parts.append("\n### Each grader's rule\n\n")
    parts += [
        f"- **{escape_text(g['name'])}** ({escape_text(g['role'])} by default): {escape_text(g['rule'])}\n"
        for g in describe_graders()
        if not benchmarks or g["name"] in used
    ]
    return "".join(parts) + "\n"


def _sample_question(question: dict) -> str:
    """``What is 17 × 6? Options 96, 102, 112, 106; correct B.``, or the prompt with its key."""
    if question.get("choices"):
        return f"{question['prompt']} Options {', '.join(question['choices'])}; correct {question['correct_choice']}."
    key = question["answer_key"]
    return f"{question['prompt']} Key: {key.get('answer') or key['reference']}."


def _grader_names(traditional: dict) -> str:
    """``mc_letter (multiple choice questions), recorded (open questions)``, or one grader for every question."""
    if len({spec.name for spec in traditional.values()}) == 1:
        return f"{escape_text(next(iter(traditional.values())).name)} (every question)"
    return ", ".join(
        f"{escape_text(spec.name)} ({escape_text(kind.replace('_', ' '))} questions)"
        for kind, spec in traditional.items()
    )


def _schema_fields(schema: dict) -> str:
    required = set(schema.get("required", []))
    rows = [
        [
            Cell(name),
            Cell(_type(spec)),
            Cell("yes" if name in required else "no"),
            Cell(str(spec.get("description", ""))),
        ]
        for name, spec in schema.get("properties", {}).items()
    ]
    return table(["Field", "Type", "Required", "Meaning"], rows, sortable=False)


def _type(spec: dict) -> str:
    kind = spec.get("type") or ("one of " + ", ".join(map(str, spec["enum"])) if "enum" in spec else "see schema")
    return ", ".join(kind) if isinstance(kind, list) else str(kind)


DOWNLOADS_PAGE = "downloads.md"
"""Docs path of the Downloads page."""


def downloads_page(
    results: list[BenchmarkResults],
    releases: list[ReleaseRecord],
    current: str | None = None,
    shared: SharedFiles | None = None,
) -> tuple[Page, dict[str, str | bytes]]:
    """The downloads page and the files the site carries for it.

    In the site deployed as release ``current`` the page lists every file of
    that release, linked where it lies (this site, the Hub tag, or the release
    folder), and points to the other releases' own versions of the page. The
    release files this site carries go to ``shared`` (required then), not into
    the version: a file that two releases hold alike is one file on
    ``gh-pages``. In any other build the page offers this build's statistics
    tables, returned with it.
    """
    assets: dict[str, str | bytes] = {}
    parts = [
        front_matter("Downloads"),
        "# Downloads\n\n",
        "Column meanings of every table are on the [methodology page](methodology.md#columns).\n\n",
    ]
    if current is None:
        parts.append(_build_downloads(results, assets))
    else:
        record = next((r for r in releases if r.version == current), None)
        if record is None:
            raise ReleaseError(f"release {current} is not in releases/ — run `dualboard release {current}` again")
        if shared is None:
            raise ValueError("a release's downloads page needs the SharedFiles its files go to")
        parts.append(_release_downloads(record, shared))
    parts.append(_other_releases([r for r in reversed(releases) if r.version != current], linked=current is not None))
    return Page(DOWNLOADS_PAGE, "".join(parts)), assets


def _build_downloads(results: list[BenchmarkResults], assets: dict[str, str | bytes]) -> str:
    """This build's statistics tables as CSV files next to the page (added to ``assets``)."""
    parts = [
        "## This build\n\nStatistics tables of the version you are reading (CSV, full precision). A text cell "
        "that a spreadsheet would run as a formula (such as `=SUM(A1)`) starts with `'`.\n\n"
    ]
    for r in results:
        rows = []
        for name in TABLES:
            text = download_csv(getattr(r.stats, name))
            assets[f"downloads/current/{r.name}/{name}.csv"] = text
            rows.append(
                [
                    Cell(f"{name}.csv", href=f"current/{r.name}/{name}.csv"),
                    Cell(str(len(text.encode())), sort=len(text.encode())),
                ]
            )
        parts.append(f"### {escape_text(r.benchmark.title)}\n\n" + table(["File", "Bytes"], rows, sortable=False))
    return "".join(parts)


def _release_downloads(record: ReleaseRecord, shared: SharedFiles) -> str:
    """Every file of one release, linked where it lies; those small enough to travel with the site go to ``shared``.

    A carried file keeps its release path inside a folder named by its content
    (:func:`shared_folder`), so a reader's browser saves it under its own name.
    """
    version, hub = record.version, record.hub
    rows, carried = [], 0
    for name, (size, digest) in sorted(record.files.items()):
        data = record.folder_bytes(name) if carried_in_site(size) else None
        if data is not None:
            path = f"{shared_folder(data)}/{site_file(name)}"
            shared.add(path, data)
            carried += 1
            cell, where = Cell(name, href=shared_href(DOWNLOADS_PAGE, path, versioned=True)), "this site"
        elif hub is not None:
            cell, where = Cell(name, href=hub_file_url(*hub, version, name)), "Hugging Face Hub"
        else:
            cell, where = Cell(name), "release assets"
        rows.append([cell, Cell(str(size), sort=size), Cell(where), Cell(digest, css_class="dualboard-hash")])
    # the version matches release_files.VERSION (letters, digits, . _ -), so it is safe inside a code span
    text = (
        f"## Release `{version}`\n\nReleased {escape_text(record.manifest.get('released', ''))}. Every file of "
        "this release, with its size and SHA-256 (`sha256sum -c SHA256SUMS` checks the files you downloaded, "
        "kept at the paths listed). "
        + _where_text(record, all_here=carried == len(rows))
        + "\n\n"
        + table(["File", "Bytes", "Where", "SHA-256"], rows, sortable=False)
        + "\n"
        + _load_text(record)
    )
    return text


def _where_text(record: ReleaseRecord, *, all_here: bool) -> str:
    """Where the files are, in words: on this site, and the larger ones at the Hub tag or as release assets."""
    limit = f"{SITE_FILE_LIMIT // 1000**2} MB"
    if all_here and record.hub is None:
        return f"Every file is part of this site (files up to {limit} are)."
    if record.hub is not None:
        endpoint, repo_id = record.hub
        # code spans show their text literally, so only names the manifest checks go in them
        # (release_files.load_release)
        return (
            f"Files up to {limit} are part of this site. Every file, the larger ones included, is on the Hugging "
            f"Face Hub dataset `{repo_id}` at {escape_text(endpoint)}, tag `{record.version}`, "
            f"folder `{hub_folder(record.version)}`."
        )
    return (
        f"Files up to {limit} are part of this site. The larger ones (*release assets*) are attached to this "
        f"leaderboard's release `{record.version}` on its code host; the maintainers find them in the folder "
        f"`releases/{record.version}/` that `dualboard release` wrote."
    )


def _load_text(record: ReleaseRecord) -> str:
    """How to load the tables with ``datasets``."""
    if record.hub is not None:
        _endpoint, repo_id = record.hub
        return (
            f"Load a table (configs {_configs()}) straight from the Hub (for a Hub other "
            "than huggingface.co, set `HF_ENDPOINT` to its address first):\n\n"
            + code_block(
                f'import datasets\nscored = datasets.load_dataset("{repo_id}", "scored", '
                f'revision="{record.version}", split="train")'
            )
        )
    return (
        "Load the tables from a folder holding the downloaded files (the dataset card `README.md` names the "
        f"configs {_configs()}):\n\n"
        + code_block('import datasets\nscored = datasets.load_dataset("path/to/folder", "scored", split="train")')
    )


def _configs() -> str:
    return ", ".join(f"`{t}`" for t in RELEASE_TABLES)


def _other_releases(records: list[ReleaseRecord], *, linked: bool) -> str:
    """The other releases; in a deployed version each links to its own Downloads page."""
    if not records:
        return (
            (
                "\n## Releases\n\nNo release yet. `dualboard release VERSION` freezes one: scored answers and verdicts "
                "(Parquet and CSV), statistics, a manifest, a dataset card and SHA-256 checksums.\n"
            )
            if not linked
            else ""
        )
    items = []
    for r in records:
        released = escape_text(r.manifest.get("released", ""))
        where = (
            link(f"../../{r.version}/downloads/", "its downloads")
            if linked
            else "its files are on the Downloads page of that version of the site"
        )
        items.append(f"- `{r.version}` ({released}): {where}\n")
    return f"\n## {'Other releases' if linked else 'Releases'}\n\n" + "".join(items)
