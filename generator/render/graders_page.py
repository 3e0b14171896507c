"""The graders page of one benchmark: agreement with humans and each other, coverage, disagreements."""

from __future__ import annotations

import pandas as pd

from dualboard.grading.registry import describe_graders
from dualboard.kappa import MAX_LABEL_SPAN, MIN_QUESTIONS, PASS_MARK, UNDEFINED_SHARE
from dualboard.labelling.design import kappa_sentence
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, Row, paragraph, table
from dualboard.render.numbers import (
    format_interval,
    format_number,
    format_percent,
    interval_digits,
    is_missing,
    is_true,
    sort_key,
)
from dualboard.render.pages import (
    BenchmarkResults,
    Page,
    front_matter,
    question_href,
    question_slugs,
    run_href,
    run_slug,
)
from dualboard.scored_files import ANSWER_SLOT
from dualboard.stats.scores import MIN_COVERAGE

MAX_LISTED = 300
"""Disagreements listed on the page; all of them are in the verdicts download."""
ALL = "all"
"""``run_id`` / ``category`` of agreement.csv rows that pool every run or category."""
HUMAN = "human"
MEASURES = ["Accuracy [95% CI]", "Cohen's κ [95% CI]", "Label (CI spans)", "Mean |difference| [95% CI], points"]
HUMAN_HEADERS = [
    "Grader",
    "Labelled answers judged",
    "Questions",
    *MEASURES,
    "Sensitivity [95% CI]",
    "Specificity [95% CI]",
    "Passes: grader / people",
    "Note",
]
PAIR_HEADERS = [
    "Grader",
    "Compared with",
    "Category",
    "Answers (coverage)",
    "Questions",
    *MEASURES,
    "Pass/fail",
    "Fail/pass",
    "Note",
]
INTRO = (
    "A grader is only as good as its agreement with people. "
    f"Each score becomes a verdict at {PASS_MARK:g} (a mark of {PASS_MARK + 10:g} passes). "
    "*Accuracy* is raw agreement of those verdicts; *Cohen's κ* corrects it for chance (labels after "
    "Landis and Koch; in brackets, the labels the interval spans when it spans at most "
    f"{MAX_LABEL_SPAN}, else the point's label alone); both intervals resample questions, so rounds "
    f"of one question are not counted as independent. κ needs at least {MIN_QUESTIONS} questions, and at most "
    f"{UNDEFINED_SHARE:.0%} of question resamples may leave a rater with one verdict (κ then measures no "
    "agreement); otherwise it is not estimable and the note says why, naming the rater and its passes. "
    "An answer a grader could not judge (no verdict) is left out of its comparisons, "
    "and the answers column says how many of the other rater's answers remain.\n\n"
)
SCALE = (
    "People mark open answers on 0–100 with partial credit, so the verdicts above lose information. The graded "
    "scale is compared by the *mean absolute difference* in points, |grader − people| averaged over the answers "
    "both judged (interval clustered by question). It is chosen over a weighted κ because it is in the board's "
    'own unit and reads directly as "how far from the human mark", and because a weighted κ between a grader '
    "that gives only 0 or 100 and marks with steps between depends on how those steps are binned and weighted. "
    "A pass/fail grader is at least min(m, 100 − m) points from a partial mark m, so compare it with the judge "
    "knowing that.\n\n"
)


def graders_page(result: BenchmarkResults) -> Page:
    """Agreement with human labels (overall, by model, by category), between graders, coverage, disagreements."""
    agreement = result.stats.agreement
    human = agreement["grader_b"].eq(HUMAN) if not agreement.empty else pd.Series(dtype=bool)
    text = (
        front_matter(f"Graders: {result.name}", hide=("toc",))
        + f"# Graders of {escape_text(result.benchmark.title)}\n\n"
        + INTRO
        + "## How each grader judges\n\n"
        + _rules_list(result.verdicts)
        + "\n## Against human labels\n\n"
        + paragraph(answer_key_choice(result.scored, result.verdicts, agreement))
        + "\n"
        + (
            _against_humans(agreement[human], result)
            if human.any()
            else "No human labels for this benchmark yet: label answers with `dualboard label` (or add "
            "`human_labels.csv`, columns run, question, round, label, response_sha256) to validate the graders and "
            "choose the answer-key grading by them.\n"
        )
        + _design_section(result.stats.labelling)
        + "\n## Between graders\n\n"
        + _pair_table(agreement[~human] if len(human) else agreement)
        + "\n## Coverage\n\n"
        "Share of the answers each grader was given on which it reached a verdict. *No verdict*: the grader could "
        "not judge the answer, which is left out of that grading's means and comparisons. *Unreadable*: the model "
        "gave no readable answer, which is the model's failure and scores 0. *Recovered*: the verdict needed a "
        "fallback parse.\n\n"
        + _coverage_table(result.verdicts)
        + "\n## Disagreements to audit\n\n"
        + _disagreement_list(result)
    )
    return Page(f"benchmarks/{result.name}/graders.md", text)


def _rules_list(verdicts: pd.DataFrame) -> str:
    """What each grader of this benchmark reads and when it gives no verdict, from the graders' own code."""
    # unique() first: iterating an Arrow-backed column makes a Python object per row (a second at 1M answers)
    used = set(verdicts["grader"].unique()) if "grader" in verdicts.columns else set()
    items = [
        f"- **{escape_text(g['name'])}** (version {escape_text(g['version'])}): {escape_text(g['rule'])}\n"
        for g in describe_graders()
        if g["name"] in used
    ]
    return "".join(items) or "No grader has judged an answer of this benchmark yet.\n"


def _against_humans(rows: pd.DataFrame, result: BenchmarkResults) -> str:
    """The three tables against people: overall, by answering model and by category."""
    roles = result.verdicts.groupby("grader")["role"].first().to_dict() if len(result.verdicts) else {}
    rows = rows.assign(grader_a=[f"{g} ({roles[g]})" if g in roles else g for g in rows["grader_a"]])
    overall = rows[rows["run_id"].eq(ALL) & rows["category"].eq(ALL)]
    by_run = rows[~rows["run_id"].eq(ALL)]
    by_category = rows[rows["run_id"].eq(ALL) & ~rows["category"].eq(ALL)]
    models = result.models
    names = dict(zip(models["run_id"], models["model"], strict=True)) if not models.empty else {}

    def model_cell(r) -> Cell:
        return Cell(names.get(r.run_id, str(r.run_id)), href=run_href(run_slug(r.run_id), "../"))

    return (
        "Which automatic answer-key grader can stand in for people? Each grader against the human labels, on the "
        "answers both judged.\n\n"
        + SCALE
        + "### Overall\n\n"
        + _human_table(overall)
        + "\n### By answering model\n\n"
        + (_human_table(by_run, ("Model", model_cell)) if not by_run.empty else "One run only: see overall.\n")
        + "\n### By category\n\n"
        + (
            _human_table(by_category, ("Category", lambda r: Cell(str(r.category))))
            if not by_category.empty
            else "The questions carry no category.\n"
        )
    )


DESIGN_INTRO = (
    "People labelled answers on the labelling page (`dualboard label`), which draws them where graders disagree "
    "first, then at random within each cell of the graders' verdicts. Each labelled answer stands for the "
    "unlabelled ones of its cell (weight N/n), so these figures estimate each grader's agreement with people "
    "over every answer it judged, not only over the labelled ones, which over-represent disagreements. "
    "Intervals are 95 % (stratified Taylor-series variance, finite-population corrected).\n\n"
)


def _design_section(labelling: pd.DataFrame) -> str:
    """Each grader against people weighted by the labelling design, and labellers against each other."""
    if labelling.empty:
        return ""
    design = labelling[labelling["design"].eq("stratified")]
    people = labelling[labelling["design"].eq("overlap")]
    lines = "".join(f"- {escape_text(design_sentence(r))}\n" for r in design.itertuples(index=False))
    text = "\n### By the labelling design\n\n" + DESIGN_INTRO + lines + "\n" + _design_table(design)
    if not people.empty:
        text += (
            "\n### People against people\n\n"
            "Two labellers on the answers both labelled (a set share of answers goes to a second labeller): the "
            "ceiling any automatic grader can reach against people.\n\n" + _design_table(people, "Labeller")
        )
    return text


def design_sentence(r) -> str:
    """The labelling page's sentence of one design row (:func:`~dualboard.labelling.design.kappa_sentence`)."""
    row = r._asdict() | {"estimable": is_true(r.estimable), "reason": _text(r.reason)}
    interval = format_interval(r.kappa, r.kappa_ci_low, r.kappa_ci_high, 2) if row["estimable"] else ""
    return kappa_sentence(row, interval)


def _design_table(rows: pd.DataFrame, first: str = "Grader") -> str:
    headers = [
        first,
        "Compared with",
        "Labels",
        "Answers",
        *MEASURES[:2],
        "Sensitivity [95% CI]",
        "Specificity [95% CI]",
        "Note",
    ]
    body = [
        [
            Cell(str(r.grader)),
            Cell(str(r.compared_with)),
            Cell(str(int(r.n_labels)), sort=int(r.n_labels)),
            Cell(f"{int(r.n_answers)} ({int(r.n_items)} distinct)", sort=int(r.n_answers)),
            _share_cell(r.accuracy, r.accuracy_ci_low, r.accuracy_ci_high),
            Cell(
                format_interval(r.kappa, r.kappa_ci_low, r.kappa_ci_high, 2) if is_true(r.estimable) else "—",
                sort=sort_key(r.kappa),
            ),
            _share_cell(r.sensitivity, r.sensitivity_ci_low, r.sensitivity_ci_high),
            _share_cell(r.specificity, r.specificity_ci_low, r.specificity_ci_high),
            Cell(_text(r.reason)),
        ]
        for r in rows.itertuples(index=False)
    ]
    return table(headers, body)


def _human_table(rows: pd.DataFrame, slice_column: tuple | None = None) -> str:
    """One row per grader (and slice) against human labels."""
    headers = HUMAN_HEADERS if slice_column is None else [HUMAN_HEADERS[0], slice_column[0], *HUMAN_HEADERS[1:]]
    body = []
    for r in rows.itertuples(index=False):
        cells = [
            Cell(str(r.grader_a)),
            *([slice_column[1](r)] if slice_column else []),
            _answers_cell(r),
            Cell(str(int(r.n_questions)), sort=int(r.n_questions)),
            *_measure_cells(r),
            _share_cell(r.sensitivity, r.sensitivity_ci_low, r.sensitivity_ci_high),
            _share_cell(r.specificity, r.specificity_ci_low, r.specificity_ci_high),
            Cell(
                f"{format_percent(r.prevalence_a, 0)} / {format_percent(r.prevalence_b, 0)}",
                sort=sort_key(r.prevalence_a),
            ),
            Cell(_text(r.reason)),
        ]
        body.append(cells)
    return table(headers, body) if body else "No grader judged a labelled answer.\n"


def _pair_table(rows: pd.DataFrame) -> str:
    """Grader vs grader, overall and per category (per-run rows are in agreement.csv)."""
    rows = rows[rows["run_id"].eq(ALL)] if not rows.empty else rows
    if rows.empty:
        return "No pairs of graders judged the same answers.\n"
    body = [
        [
            Cell(str(r.grader_a)),
            Cell(str(r.grader_b)),
            Cell(str(r.category)),
            _answers_cell(r),
            Cell(str(int(r.n_questions)), sort=int(r.n_questions)),
            *_measure_cells(r),
            Cell(str(int(r.n_a_pass_b_fail)), sort=int(r.n_a_pass_b_fail)),
            Cell(str(int(r.n_a_fail_b_pass)), sort=int(r.n_a_fail_b_pass)),
            Cell(_text(r.reason)),
        ]
        for r in rows.itertuples(index=False)
    ]
    return table(PAIR_HEADERS, body)


def _answers_cell(r) -> Cell:
    """``n of n_judged_b (coverage)``: how many of the other rater's answers this grader judged."""
    return Cell(f"{int(r.n)} of {int(r.n_judged_b)} ({format_percent(r.coverage_a, 0)})", sort=int(r.n))


def _kappa_text(kappa: float, low: float, high: float, method: str) -> str:
    """κ with its interval; perfect agreement has only a one-sided 95 % lower bound, shown as such.

    Examples
    --------
    >>> _kappa_text(1.0, 0.694, 1.0, "one_sided_perfect"), _kappa_text(0.5, 0.2, 0.8, "bca")
    ('1.00 (≥ 0.69)', '0.50 [0.20, 0.80]')
    """
    if method == "one_sided_perfect":
        return f"{format_number(kappa, 2)} (≥ {format_number(low, interval_digits((low, high), 2))})"
    return format_interval(kappa, low, high, 2)


def _measure_cells(r) -> list[Cell]:
    """Accuracy, κ, its Landis–Koch label and the mean absolute difference of one agreement row."""
    label = _text(r.label) + (f" ({_text(r.label_ci_span)})" if _text(r.label_ci_span) else "")
    return [
        _share_cell(r.accuracy, r.accuracy_ci_low, r.accuracy_ci_high),
        Cell(
            _kappa_text(r.kappa, r.kappa_ci_low, r.kappa_ci_high, r.kappa_ci_method) if is_true(r.estimable) else "—",
            sort=sort_key(r.kappa),
        ),
        Cell(label),
        Cell(
            format_interval(r.mean_abs_diff, r.mean_abs_diff_ci_low, r.mean_abs_diff_ci_high),
            sort=sort_key(r.mean_abs_diff),
        ),
    ]


def _share_cell(value, low, high) -> Cell:
    text = "—" if is_missing(value) else format_interval(100 * value, 100 * low, 100 * high) + " %"
    return Cell(text, sort=sort_key(value))


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and is_missing(value)) else str(value)


def answer_key_choice(scored: pd.DataFrame, verdicts: pd.DataFrame, agreement: pd.DataFrame) -> str:
    """Say which grader fills the answer-key column and why (the rule of ``grade_benchmark``).

    Examples
    --------
    >>> scored = pd.DataFrame({"answer_key_grader": ["rules"] * 2})
    >>> verdicts = pd.DataFrame({"grader": ["rules"] * 2, "role": "answer_key", "score": [100.0, 0.0]})
    >>> answer_key_choice(scored, verdicts, pd.DataFrame())
    'Answer-key column: rules, the first answer-key grader the benchmark lists (no human labels to choose by).'
    """
    chosen = str(scored["answer_key_grader"].iloc[0]) if len(scored) else ""
    labels = int(verdicts.loc[verdicts["role"].eq(HUMAN), "score"].notna().sum()) if len(verdicts) else 0
    if not chosen:
        return "No answer-key grader."
    if not labels:
        return (
            f"Answer-key column: {chosen}, the first answer-key grader the benchmark lists "
            "(no human labels to choose by)."
        )
    if chosen == HUMAN:
        return (
            f"Answer-key column: human, listed first by the benchmark: people's labels ({labels} of {len(scored)} "
            "answers carry one). A run with an answer nobody labelled awaits labels and is not ranked under "
            "answer-key grading."
        )
    rule = (
        f"the automatic answer-key grader with the highest Cohen's κ against the human labels (score ≥ 50 "
        f"passes) among those that judge at least {MIN_COVERAGE:.0%} of the labelled answers and have an "
        "estimable κ; equal κ goes to the grader listed first"
    )
    row = _overall_against_humans(agreement, chosen)
    if row is not None and is_true(row["estimable"]) and _labelled_coverage(verdicts, chosen) >= MIN_COVERAGE:
        return (
            f"Answer-key column: {chosen}, chosen by κ = "
            f"{_kappa_text(row['kappa'], row['kappa_ci_low'], row['kappa_ci_high'], row['kappa_ci_method'])} against "
            f"{int(row['n'])} human-labelled answers ({labels} of {len(scored)} answers carry a label): {rule}."
        )
    return (
        f"Answer-key column: {chosen}, the first answer-key grader the benchmark lists: no "
        f"grader qualifies as {rule}; {labels} of {len(scored)} answers carry a human label."
    )


def _labelled_coverage(verdicts: pd.DataFrame, grader: str) -> float:
    """The share of the labelled answers on which ``grader`` gave a verdict."""
    slot = ["run_id", "question_id", "round"]
    labelled = verdicts.loc[verdicts["role"].eq(HUMAN), slot].drop_duplicates()
    judged = verdicts.loc[verdicts["grader"].eq(grader) & verdicts["score"].notna(), slot].drop_duplicates()
    return len(judged.merge(labelled, on=slot)) / len(labelled) if len(labelled) else 0.0


def _overall_against_humans(agreement: pd.DataFrame, grader: str) -> pd.Series | None:
    """Return agreement.csv's overall row of ``grader`` against human labels, if any."""
    if agreement.empty:
        return None
    hit = agreement[
        agreement["grader_a"].eq(grader)
        & agreement["grader_b"].eq(HUMAN)
        & agreement["run_id"].eq(ALL)
        & agreement["category"].eq(ALL)
    ]
    return hit.iloc[0] if len(hit) else None


def coverage_rates(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per grader: ``grader``, ``role``, ``n`` answers given, ``coverage``, ``no_verdict``, ``unreadable``,
    ``recovered``.

    ``no_verdict`` is the share without a score (the grader could not judge),
    ``coverage`` its complement; ``unreadable`` the share scored although no
    answer could be read (``verdict_parse`` none with a score: the model's
    failure, 0); ``recovered`` the share read by a fallback parse.

    Examples
    --------
    >>> v = pd.DataFrame({"grader": "rules", "role": "answer_key", "score": [100.0, None, 0.0, 0.0],
    ...                   "verdict_parse": ["ok", "none", "none", "recovered"]})
    >>> coverage_rates(v)[["n", "coverage", "unreadable", "recovered"]].to_dict("records")
    [{'n': 4, 'coverage': 0.75, 'unreadable': 0.25, 'recovered': 0.25}]
    """
    if verdicts.empty:
        return pd.DataFrame(columns=["grader", "role", "n", "coverage", "no_verdict", "unreadable", "recovered"])
    parse, judged = verdicts["verdict_parse"], verdicts["score"].notna()
    frame = verdicts.assign(
        coverage=judged, no_verdict=~judged, unreadable=parse.eq("none") & judged, recovered=parse.eq("recovered")
    )
    out = frame.groupby(["grader", "role"], sort=True).agg(
        n=("score", "size"),
        coverage=("coverage", "mean"),
        no_verdict=("no_verdict", "mean"),
        unreadable=("unreadable", "mean"),
        recovered=("recovered", "mean"),
    )
    return out.reset_index()


def _coverage_table(verdicts: pd.DataFrame) -> str:
    rates = coverage_rates(verdicts)
    rows = [
        [
            Cell(str(r.grader)),
            Cell(str(r.role)),
            Cell(str(int(r.n)), sort=int(r.n)),
            *(Cell(format_percent(v), sort=sort_key(v)) for v in (r.coverage, r.no_verdict, r.unreadable, r.recovered)),
        ]
        for r in rates.itertuples(index=False)
    ]
    return table(["Grader", "Role", "Answers", "Coverage", "No verdict", "Unreadable", "Recovered"], rows)


def grader_disagreements(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Answers to audit, one row per answer with a ``score:<grader>`` column per grader.

    An answer is listed when two graders that both gave it a verdict disagree
    on pass/fail: every pair the agreement tables compare, people and the
    traditional grading included, so each pair's pass/fail and fail/pass
    counts are among these answers. A missing verdict is no disagreement.

    Examples
    --------
    >>> v = pd.DataFrame({"run_id": "r", "question_id": ["q0", "q1"] * 2, "round": 0,
    ...     "grader": ["rules"] * 2 + ["judge"] * 2, "score": [100.0, 0.0, 100.0, 100.0]})
    >>> grader_disagreements(v).to_dict("records")
    [{'run_id': 'r', 'question_id': 'q1', 'round': 0, 'score:judge': 100.0, 'score:rules': 0.0}]
    """
    keys = list(ANSWER_SLOT)
    graders = sorted(verdicts["grader"].dropna().unique())
    columns = [*keys, *(f"score:{g}" for g in graders)]
    judged = verdicts[verdicts["score"].notna()]
    # min ≠ max of an answer's pass/fail verdicts: some two graders split on it (no pivot of every answer)
    verdict = judged["score"].ge(PASS_MARK).groupby([judged[k] for k in keys], observed=True).agg(["min", "max"])
    split = verdict.index[verdict["min"] != verdict["max"]].to_frame(index=False)
    if split.empty:
        return pd.DataFrame(columns=columns)
    wide = verdicts.merge(split, on=keys).pivot_table(index=keys, columns="grader", values="score", aggfunc="first")
    out = wide.reindex(columns=graders).reset_index()
    out.columns = columns
    return out


def _disagreement_list(result: BenchmarkResults) -> str:
    if result.verdicts.empty:
        return "No verdicts.\n"
    found = grader_disagreements(result.verdicts)
    if found.empty:
        return "None: every pair of graders compared above gives the same verdict on every answer both judged.\n"
    slugs = question_slugs(result.benchmark)
    graders = [c.split(":", 1)[1] for c in found.columns if c.startswith("score:")]
    rows = [
        Row(
            [
                Cell(str(r["question_id"]), href=question_href(slugs.get(r["question_id"], "x"), "../")),
                Cell(str(r["run_id"]), href=run_href(run_slug(r["run_id"]), "../")),
                Cell(str(r["round"]), sort=int(r["round"])),
            ]
            + [Cell(_score(r[f"score:{g}"]), sort=sort_key(r[f"score:{g}"])) for g in graders],
            css_class="dualboard-disagree",
        )
        for r in found.head(MAX_LISTED).to_dict("records")
    ]
    note = (
        paragraph(f"Showing {MAX_LISTED} of {len(found)}; all are in the verdicts download.")
        if len(found) > MAX_LISTED
        else ""
    )
    return (
        f"{len(found)} answers on which two graders compared above disagree (≥ {PASS_MARK:g} counts as a pass): "
        "every pass/fail and fail/pass answer of the tables is here. Open the question to read the "
        "answer, the key and every grader's reasoning.\n\n"
        # Closed until asked for: hundreds of rows laid out on load cost a phone seconds.
        + f"<details><summary>Show the {min(len(found), MAX_LISTED)} answers</summary>"
        + table(["Question", "Run", "Round", *graders], rows).rstrip()
        + "</details>\n"
        + note
    )


def _score(value) -> str:
    return "—" if is_missing(value) else f"{float(value):.0f}"
