"""Real data: the commitment rule of ``rules`` (issue 25 §3) on both published "Easy Problems" releases.

No verdict moves: every answer gets the verdict it got before the rule (the rule switched off), so every
verdict that agreed with the release's own mark (the paper's human marks, the multiple-choice release's
published score) still does. And a run written without reading a key scores 0 on every question.
"""

from __future__ import annotations

import pytest

from dualboard.grading import rules
from dualboard.grading.rules import RulesGrader
from dualboard.importers import import_autogenai
from tests.importers.import_fixtures import MC_RELEASE, OPEN_RELEASE, load_imported, load_labels, real_data


@pytest.fixture(scope="module", params=[OPEN_RELEASE, MC_RELEASE])
def release(request, tmp_path_factory):
    """The imported release's questions and answers, each with its own mark (0-100)."""
    dest = tmp_path_factory.mktemp("release")
    import_autogenai(real_data() / request.param, benchmark="easy", dest=dest)
    benchmark, runs = load_imported(dest, "easy")
    labels = load_labels(dest, "easy")
    marks = {} if labels is None else {(r.run_id, r.question_id, r.round): r.score for r in labels.itertuples()}
    answers = []
    for run in runs:
        for p in run.predictions:
            mark = marks.get((run.run_id, p["question_id"], p.get("round", 0)))
            mark = (p.get("recorded") or {}).get("published") if mark is None else mark
            answers.append((benchmark.question(p["question_id"]), p, mark))
    return request.param, answers


def test_no_verdict_moves_on_the_real_releases(release, monkeypatch) -> None:
    name, answers = release
    now = [RulesGrader().grade(q, p) for q, p, _ in answers]
    monkeypatch.setattr(rules, "uncommitted", lambda *args: None)
    before = [RulesGrader().grade(q, p) for q, p, _ in answers]
    moved = [
        (p["question_id"], b.score, n.detail) for (q, p, _), b, n in zip(answers, before, now) if b.score != n.score
    ]
    assert moved == []
    agreed = sum(v.score is not None and (v.score >= 50) == (m >= 50) for (_, _, m), v in zip(answers, now))
    # On the paper release rules judges only the 9 questions whose key is a few words (the others' keys are
    # reference sentences): 27 answers, every verdict the human mark's.
    judged = sum(v.score is not None for v in now)
    assert (agreed, judged if name == OPEN_RELEASE else agreed) == {OPEN_RELEASE: (27, 27), MC_RELEASE: (3899, 3899)}[
        name
    ]
    assert sum(v.score == 100 for v in now) > 0


def test_a_key_blind_run_scores_nothing_on_the_real_releases(release) -> None:
    _, answers = release
    questions = {q["id"]: q for q, _, _ in answers}
    for question in questions.values():
        if question.get("choices"):
            final = " or ".join(question["choices"])
        else:
            final = f"{question['prompt']} {' '.join(map(str, range(130)))}"
        verdict = RulesGrader().grade(question, {"response": f"Final answer: {final}"})
        # a key that is only a reference sentence is judged by no rule, so nothing can pass it either
        expected = 0.0 if question.get("choices") or "answer" in question["answer_key"] else None
        assert verdict.score == expected, (question["id"], verdict.detail)
