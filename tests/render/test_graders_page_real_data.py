"""Real data: the graders page of the two shared releases says what its tables hold (issue 26 §3, §6, §7).

The releases are imported and graded as ``dualboard build`` does; the paper
release with the authors' marks as human labels, the multiple-choice release
without labels (its ``rules`` and ``mc_letter`` disagree on one answer of 3,900).
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from dualboard import kappa
from dualboard.grading import grade_benchmark
from dualboard.importers import import_autogenai
from dualboard.render.graders_page import grader_disagreements, graders_page
from dualboard.render.pages import BenchmarkResults
from dualboard.stats import analyse, read_tables, write_tables
from dualboard.stats.agreement import question_counts, to_verdicts
from tests.importers.import_fixtures import MC_RELEASE, OPEN_RELEASE, load_imported, load_labels, real_data
from tests.render.test_graders_page import listed_per_pair


def _built(tmp_path_factory, release: str, labelled: bool) -> BenchmarkResults:
    dest = tmp_path_factory.mktemp(release)
    import_autogenai(real_data() / release, benchmark="easy-problems", dest=dest)
    benchmark, runs = load_imported(dest, "easy-problems")
    graded = grade_benchmark(benchmark, runs, human_labels=load_labels(dest, "easy-problems") if labelled else None)
    write_tables(analyse(graded.scored, verdicts=graded.verdicts, n_boot=2000), dest / "stats")
    return BenchmarkResults(benchmark, graded.scored, graded.verdicts, tuple(runs), stats=read_tables(dest / "stats"))


@pytest.fixture(scope="module")
def paper(tmp_path_factory) -> BenchmarkResults:
    return _built(tmp_path_factory, OPEN_RELEASE, labelled=True)


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> BenchmarkResults:
    return _built(tmp_path_factory, MC_RELEASE, labelled=False)


def _text(result: BenchmarkResults) -> str:
    content = re.sub(r"</tr>", "\n", graders_page(result).content)
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"</t[dh]>", " | ", content)))


def _overall(result: BenchmarkResults, grader_a: str, grader_b: str):
    a = result.stats.agreement
    hit = a[a.grader_a.eq(grader_a) & a.grader_b.eq(grader_b) & a.run_id.eq("all") & a.category.eq("all")]
    assert len(hit) == 1
    return hit.iloc[0]


@pytest.mark.slow
@pytest.mark.parametrize("release", ["paper", "multi"])
def test_every_disagreement_the_tables_count_is_listed(release, request):
    """Before: the multiple-choice page said "None" under rules vs mc_letter's one fail/pass answer."""
    result = request.getfixturevalue(release)
    pairs = listed_per_pair(grader_disagreements(result.verdicts), result.stats.agreement)
    assert all(counted == listed for _, _, counted, listed in pairs), pairs
    assert sum(counted for _, _, counted, _ in pairs) > 0 and "None:" not in _text(result)


def test_rules_kappa_against_the_authors_marks_is_not_estimable_with_its_reason(paper):
    """Before: κ 0.36 [0.00, 1.00] "fair (slight–almost perfect)". Rules now judges only the 9 questions whose key
    is a few words (the others' keys are reference sentences): 27 answers, too few questions for κ."""
    row = _overall(paper, "rules", "human")
    reason = "fewer than 10 questions (9)"
    assert not row["estimable"] and np.isnan(row["kappa"]) and row["reason"] == reason
    text = _text(paper)
    assert reason in text and "slight–almost perfect" not in text
    recorded = _overall(paper, "recorded", "human")  # 30 questions, both raters use both classes in many
    assert recorded["estimable"] and recorded["label_ci_span"] == "moderate–substantial"


def test_the_exact_one_class_share_is_what_the_bootstrap_sees(paper):
    """The rule's share ((7/9)^9 = 10.4 %: rules passes 2 answers, on 2 of its 9 questions) against 20,000 seeded
    question resamples of the same answers."""
    v = to_verdicts(paper.verdicts)
    rules, human = v[v.grader.eq("rules")], v[v.grader.eq("human")]
    joined = rules.merge(human, on=["run_id", "question_id", "round"], suffixes=("_a", "_b")).dropna(
        subset=["verdict_a", "verdict_b"]
    )
    counts = question_counts(joined)
    draws = np.random.default_rng(7).integers(0, len(counts), size=(20_000, len(counts)))
    passes = kappa.resample_totals(counts, draws)[:, :2].sum(axis=1)
    exact = kappa.one_class_shares(counts)[0]
    assert exact == pytest.approx((7 / 9) ** 9) and (len(counts), int(counts[:, :2].sum())) == (9, 2)
    assert abs(np.mean(passes == 0) - exact) < 4 * np.sqrt(exact * (1 - exact) / len(draws))


def test_a_kappa_interval_never_reads_as_a_point(multi):
    """Before: "1.00 [1.00, 1.00]" for κ 0.9995 [0.997…, 1.0], and accuracy "100.0 [99.9, 100.0] %"."""
    row = _overall(multi, "rules", "mc_letter")
    assert row["kappa_ci_low"] < row["kappa"] < 1 and row["kappa_ci_high"] <= 1
    line = next(line for line in _text(multi).splitlines() if line.startswith("rules | mc_letter"))
    shown = re.findall(r"(-?\d+\.\d+) \[(-?\d+\.\d+), (-?\d+\.\d+)\]", line)
    assert len(shown) >= 2, line
    for point, low, high in shown[:2]:  # accuracy, κ
        assert low != point != high, line
