"""The graders page of one benchmark: agreement with humans and each other, no-verdict rates, disagreements."""

from __future__ import annotations

import pandas as pd

from generator.render.escape import escape_text
from generator.render.html import Cell, Row, paragraph, table
from generator.render.numbers import format_interval, format_percent, is_missing, sort_key
from generator.render.pages import BenchmarkResults, Page, front_matter, question_slugs, run_slug

MAX_LISTED = 300
"""Disagreements listed on the page; all of them are in the verdicts download."""
AGREEMENT_HEADERS = ["Grader", "Compared with", "Category", "Answers", "Questions", "Accuracy [95% CI]",
                     "Cohen's κ [95% CI]", "Label (CI spans)", "Pass/fail", "Fail/pass",
                     "Sensitivity [95% CI]", "Specificity [95% CI]", "Note"]


def graders_page(result: BenchmarkResults) -> Page:
    """Agreement tables from agreement.csv, the no-verdict rate per grader, and the list to audit."""
    agreement = result.stats.agreement
    human = agreement["grader_b"].eq("human") if not agreement.empty else pd.Series(dtype=bool)
    text = (
        front_matter(f"Graders: {result.name}", hide=("toc",))
        + f"# Graders of {escape_text(result.benchmark.title)}\n\n"
        "A grader is only as good as its agreement with people. *Accuracy* is raw agreement; *Cohen's κ* "
        "corrects it for chance (labels after Landis and Koch); both intervals resample questions, so rounds of one "
        "question are not counted as independent. *Pass/fail* counts answers the grader passes and the other "
        "fails; *Fail/pass* the reverse. Sensitivity and specificity are against the human labels. κ needs at least "
        "10 questions and both verdicts from both graders; otherwise the note says why it is missing.\n\n"
        "## Against human labels\n\n"
        + (_agreement_table(agreement[human]) if human.any() else
           "No human labels for this benchmark yet: add `human_labels.csv` (columns run, question, round, label) "
           "next to its questions to validate the graders.\n")
        + "\n## Between graders\n\n" + _agreement_table(agreement[~human] if len(human) else agreement)
        + "\n## No verdict\n\n"
        "Answers from which a grader could not extract a verdict (*none*: scored 0 and counted, never dropped) "
        "or had to recover one with a fallback parse (*recovered*).\n\n"
        + _no_verdict_table(result.verdicts)
        + "\n## Disagreements to audit\n\n" + _disagreement_list(result)
    )
    return Page(f"benchmarks/{result.name}/graders.md", text)


def _agreement_table(rows: pd.DataFrame) -> str:
    if rows.empty:
        return "No pairs of graders judged the same answers.\n"
    return table(AGREEMENT_HEADERS, [_agreement_row(r) for r in rows.itertuples(index=False)])


def _agreement_row(r) -> list[Cell]:
    return [
        Cell(str(r.grader_a)), Cell(str(r.grader_b)), Cell(str(r.category)),
        Cell(str(int(r.n)), sort=int(r.n)), Cell(str(int(r.n_questions)), sort=int(r.n_questions)),
        Cell(_share_interval(r.accuracy, r.accuracy_ci_low, r.accuracy_ci_high), sort=sort_key(r.accuracy)),
        Cell(format_interval(r.kappa, r.kappa_ci_low, r.kappa_ci_high, 2), sort=sort_key(r.kappa)),
        Cell(_text(r.label) + (f" ({_text(r.label_ci_span)})" if _text(r.label_ci_span) else "")),
        Cell(str(int(r.n_a_pass_b_fail)), sort=int(r.n_a_pass_b_fail)),
        Cell(str(int(r.n_a_fail_b_pass)), sort=int(r.n_a_fail_b_pass)),
        Cell(_share_interval(r.sensitivity, r.sensitivity_ci_low, r.sensitivity_ci_high), sort=sort_key(r.sensitivity)),
        Cell(_share_interval(r.specificity, r.specificity_ci_low, r.specificity_ci_high), sort=sort_key(r.specificity)),
        Cell(_text(r.reason)),
    ]


def _share_interval(value, low, high) -> str:
    if is_missing(value):
        return "—"
    return format_interval(100 * value, 100 * low, 100 * high) + " %"


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def no_verdict_rates(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per grader: ``grader``, ``role``, ``n``, ``none`` and ``recovered`` shares of its verdicts."""
    if verdicts.empty:
        return pd.DataFrame(columns=["grader", "role", "n", "none", "recovered"])
    parse = verdicts["verdict_parse"]
    frame = verdicts.assign(none=parse.eq("none"), recovered=parse.eq("recovered"))
    out = frame.groupby(["grader", "role"], sort=True).agg(n=("score", "size"), none=("none", "mean"),
                                                          recovered=("recovered", "mean"))
    return out.reset_index()


def _no_verdict_table(verdicts: pd.DataFrame) -> str:
    rates = no_verdict_rates(verdicts)
    rows = [[Cell(str(r.grader)), Cell(str(r.role)), Cell(str(int(r.n)), sort=int(r.n)),
             Cell(format_percent(r.none), sort=sort_key(r.none)), Cell(format_percent(r.recovered), sort=sort_key(r.recovered))]
            for r in rates.itertuples(index=False)]
    return table(["Grader", "Role", "Verdicts", "No verdict", "Recovered"], rows)


def grader_disagreements(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Answers to audit, one row per answer with a ``score:<grader>`` column per grader.

    With human labels: answers where some grader's pass/fail differs from the
    human label. Without: answers where the answer-key graders disagree.
    """
    keys = ["run_id", "question_id", "round"]
    humans = verdicts["role"].eq("human")
    pool = verdicts[verdicts["role"].isin(["answer_key", "human"] if not humans.any() else ["traditional", "answer_key", "human"])]
    if humans.any():
        labelled = verdicts.loc[humans, keys].drop_duplicates()
        pool = pool.merge(labelled, on=keys)
    wide = pool.pivot_table(index=keys, columns="grader", values="score", aggfunc="first")
    passes = wide.ge(50).where(wide.notna())
    reference = passes["human"] if "human" in passes.columns else passes.iloc[:, 0]
    disagree = passes.apply(lambda col: col.notna() & reference.notna() & (col != reference)).any(axis=1)
    out = wide[disagree].reset_index()
    out.columns = [c if c in keys else f"score:{c}" for c in out.columns]
    return out


def _disagreement_list(result: BenchmarkResults) -> str:
    if result.verdicts.empty:
        return "No verdicts.\n"
    found = grader_disagreements(result.verdicts)
    if found.empty:
        return "None: the graders compared here agree on every answer.\n"
    slugs = question_slugs(result.benchmark)
    graders = [c.split(":", 1)[1] for c in found.columns if c.startswith("score:")]
    rows = [Row([Cell(str(r["question_id"]), href=f"../questions/{slugs.get(r['question_id'], 'x')}/"),
                 Cell(str(r["run_id"]), href=f"../runs/{run_slug(r['run_id'])}/"), Cell(str(r["round"]), sort=int(r["round"]))]
                + [Cell(_score(r[f"score:{g}"]), sort=sort_key(r[f"score:{g}"])) for g in graders], css_class="dualboard-disagree")
            for r in found.head(MAX_LISTED).to_dict("records")]
    basis = ("some grader's verdict differs from the human label" if "human" in graders
             else "the answer-key graders disagree")
    note = paragraph(f"Showing {MAX_LISTED} of {len(found)}; all are in the verdicts download.") if len(found) > MAX_LISTED else ""
    return (f"{len(found)} answers where {basis} (≥ 50 counts as a pass). Open the question to read the "
            "answer, the key and every grader's reasoning.\n\n"
            + table(["Question", "Run", "Round", *graders], rows) + note)


def _score(value) -> str:
    return "—" if is_missing(value) else f"{float(value):.0f}"
