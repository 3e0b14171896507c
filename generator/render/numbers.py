"""Trusted numbers as display text: one place decides digits and missing values."""

from __future__ import annotations

import math

from dualboard.stats.defaults import TOO_FEW_QUESTIONS
from dualboard.stats.models_table import distinct_answers_phrase
from dualboard.stats.scores import MIN_COVERAGE, coverage_percent


def is_missing(value: object) -> bool:
    """True for None, NaN and other non-finite floats."""
    if value is None:
        return True
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError):
        return True


def is_true(value: object) -> bool:
    """Read a boolean stats column that may hold NaN (not estimable) or, read back from CSV, strings.

    Examples
    --------
    >>> is_true(True), is_true("True"), is_true(float("nan")), is_true("false")
    (True, True, False, False)
    """
    if isinstance(value, str):
        return value.lower() == "true"
    return not is_missing(value) and bool(value)


def format_number(value: float | None, digits: int = 1) -> str:
    """Format a number for display; missing values become an em dash.

    Examples
    --------
    >>> format_number(61.4583), format_number(float("nan"))
    ('61.5', '—')
    """
    if is_missing(value):
        return "—"
    return f"{float(value):.{digits}f}"


EXTRA_INTERVAL_DIGITS = 4
"""The most digits :func:`interval_digits` adds to keep an interval's distinct values apart."""


def interval_digits(values: tuple[float | None, ...], digits: int) -> int:
    """Return the digits (at least ``digits``, at most :data:`EXTRA_INTERVAL_DIGITS` more) at which the distinct
    ``values`` print distinct: a non-degenerate interval never reads as a point.

    Examples
    --------
    >>> interval_digits((99.97, 100.0), 1), interval_digits((0.99946, 0.9974, 1.0), 2), interval_digits((35.1, 15.6), 1)
    (2, 3, 1)
    """
    shown = [float(v) for v in values if not is_missing(v)]
    pairs = [(a, b) for i, a in enumerate(shown) for b in shown[i + 1 :] if a != b]
    most = digits + EXTRA_INTERVAL_DIGITS
    while digits < most and any(format_number(a, digits) == format_number(b, digits) for a, b in pairs):
        digits += 1
    return digits


def format_interval(mean: float | None, low: float | None, high: float | None, digits: int = 1) -> str:
    """Format ``mean [low, high]`` with the digits that keep its distinct values apart (:func:`interval_digits`).

    Examples
    --------
    >>> format_interval(-25.31, -35.07, -15.56)
    '-25.3 [-35.1, -15.6]'
    >>> format_interval(100.0, 99.97, 100.0), format_interval(0.99946, 0.9974, 1.0, 2)
    ('100.00 [99.97, 100.00]', '0.999 [0.997, 1.000]')
    >>> format_interval(1.0, 1.0, 1.0, 2), format_interval(0.5, float("nan"), 0.7, 2)
    ('1.00 [1.00, 1.00]', '0.50 [—, 0.70]')
    >>> format_interval(-0.026, -0.078, 0.027)
    '-0.03 [-0.08, 0.03]'
    """
    # A bound that is not 0 never prints as 0 either: "[-0.1, 0.0]" would hide that the interval crosses 0.
    digits = max(interval_digits(values, digits) for values in ((mean, low, high), (low, 0.0), (high, 0.0)))
    return f"{format_number(mean, digits)} [{format_number(low, digits)}, {format_number(high, digits)}]"


NOTHING_DETECTABLE = "nothing detectable"
"""What an MDE cell says, followed by its cause (:func:`nothing_detectable_cause`), when no difference the
comparison's data allow would be detected with 80 % power."""


def too_few_judged(n_questions: float) -> bool:
    """Say whether a comparison has under :data:`TOO_FEW_QUESTIONS` judged questions: exact test only, no interval.

    Examples
    --------
    >>> too_few_judged(2), too_few_judged(10)
    (True, False)
    """
    return not is_missing(n_questions) and int(n_questions) < TOO_FEW_QUESTIONS


def nothing_detectable_cause(n_questions: float, method: str, discordant: float | None = None) -> str:
    """Say why a comparison can detect nothing: too few judged questions, else too few discordant questions (exact
    McNemar, ``method`` ``mcnemar_exact``), else no question differing or a disagreement concentrated on too few
    questions (paired t).

    Examples
    --------
    >>> nothing_detectable_cause(2, "permutation_exact", 2)
    'too few judged questions (2 < 10)'
    >>> nothing_detectable_cause(30, "mcnemar_exact", 3), nothing_detectable_cause(30, "mcnemar_exact (median)")
    ('too few discordant questions (3 of 30)', 'too few discordant questions')
    >>> nothing_detectable_cause(30, "paired_t", 23), nothing_detectable_cause(30, "all_zero", 0)
    ('the disagreement is concentrated on too few questions (23 of 30 differ)', 'no judged question differs (of 30)')
    >>> nothing_detectable_cause(30, "paired_t (median)")
    'too little disagreement for 80 % power'
    """
    n = int(n_questions)
    if n < TOO_FEW_QUESTIONS:
        return f"too few judged questions ({n} < {TOO_FEW_QUESTIONS})"
    counts = "" if is_missing(discordant) else f"{int(discordant)} of {n}"
    if method.startswith("mcnemar_exact"):
        return "too few discordant questions" + (f" ({counts})" if counts else "")
    if not is_missing(discordant) and int(discordant) == 0:
        return f"no judged question differs (of {n})"
    if not counts:
        return "too little disagreement for 80 % power"
    return f"the disagreement is concentrated on too few questions ({counts} differ)"


def format_mde(mde: float | None, status: str, cause: str = "") -> str:
    """Format a minimum detectable effect with its status (``mde_status`` in the stats tables) and, where nothing
    is detectable, its cause (:func:`nothing_detectable_cause`).

    Examples
    --------
    >>> format_mde(21.82, "detectable")
    '21.8'
    >>> format_mde(float("nan"), "nothing_detectable", "too few judged questions (2 < 10)")
    'nothing detectable: too few judged questions (2 < 10)'
    """
    if status != "nothing_detectable":
        return format_number(mde)
    return f"{NOTHING_DETECTABLE}: {cause}" if cause else NOTHING_DETECTABLE


def mde_sort_key(mde: float | None, status: str) -> float:
    """A sort key for an MDE: "nothing detectable" sorts above every number, missing below."""
    return 1e12 if status == "nothing_detectable" else sort_key(mde)


def format_difference(mean: float, low: float, high: float, n_questions: float, p: float) -> str:
    """Format a paired difference with its interval; under :data:`TOO_FEW_QUESTIONS` judged questions no interval
    is shown (the comparison runs the exact test only), but the exact test's p.

    Examples
    --------
    >>> format_difference(-35.0, -47.7, -22.3, 2, 0.5)
    'too few judged questions (2): exact p 0.500'
    >>> format_difference(-25.31, -35.07, -15.56, 30, 0.0001)
    '-25.3 [-35.1, -15.6]'
    """
    if too_few_judged(n_questions):
        return f"too few judged questions ({int(n_questions)}): exact p {format_p(p)}"
    return format_interval(mean, low, high)


def format_p(p: float | None) -> str:
    """Format a p-value: three decimals, ``< 0.001`` below that.

    Examples
    --------
    >>> format_p(0.0000239), format_p(0.0576)
    ('< 0.001', '0.058')
    """
    if is_missing(p):
        return "—"
    return "< 0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def format_percent(share: float | None, digits: int = 1) -> str:
    """Format a 0–1 share as a percentage.

    Examples
    --------
    >>> format_percent(0.0234)
    '2.3 %'
    """
    return "—" if is_missing(share) else f"{100 * float(share):.{digits}f} %"


GRADING_NAMES = {"traditional": "traditional", "answer_key": "answer-key"}
"""How page text names each grading."""


def format_share_judged(share: float | None) -> str:
    """Format a coverage in whole percent, rounded down (:func:`dualboard.stats.scores.coverage_percent`).

    Examples
    --------
    >>> format_share_judged(0.795), format_share_judged(1.0)
    ('79 %', '100 %')
    """
    return "—" if is_missing(share) else f"{coverage_percent(share)} %"


def format_coverage(share: float | None) -> str:
    """Say what share of the answers a grading judged, where it is not all of them.

    Examples
    --------
    >>> format_coverage(0.72), format_coverage(0.999), format_coverage(1.0)
    ('72 % judged', '99 % judged', '')
    """
    return "" if is_missing(share) or float(share) >= 1 else f"{format_share_judged(share)} judged"


def format_missing(rate: float | None) -> str:
    """Say what share of a run's answers were unreadable (the model's failure, scored 0) in a grading, if any.

    Examples
    --------
    >>> format_missing(0.03), format_missing(0.0)
    ('3.0 % unreadable (scored 0)', '')
    """
    return "" if is_missing(rate) or float(rate) <= 0 else f"{format_percent(rate)} unreadable (scored 0)"


def with_coverage(text: str, share: float | None) -> str:
    """Append a coverage under 100 % to a number's text.

    Examples
    --------
    >>> with_coverage("38.0 [25.1, 52.4]", 0.5)
    '38.0 [25.1, 52.4] · 50 % judged'
    """
    coverage = format_coverage(share)
    return f"{text} · {coverage}" if coverage else text


def unranked_reason(grading: str, share: float, awaiting: float = 0) -> str:
    """Say why a run is not ranked in a grading: ``awaiting`` answers lack a human label, or its coverage is low.

    Examples
    --------
    >>> unranked_reason("answer_key", 0.795)
    'not ranked: answer-key verdicts on 79 % of answers (under 80 %)'
    >>> unranked_reason("answer_key", 0.0, awaiting=48)
    'awaiting labels: 48 answers have no human label yet'
    """
    if grading == "answer_key" and not is_missing(awaiting) and int(awaiting):
        return f"awaiting labels: {int(awaiting)} answers have no human label yet"
    return (
        f"not ranked: {GRADING_NAMES[grading]} verdicts on {format_share_judged(share)} of answers "
        f"(under {format_percent(MIN_COVERAGE, 0)})"
    )


def apart_reason(value: object) -> str:
    """A models row's ``apart_reason``: why the run is listed apart, not ranked; "" when it is not (read back
    from the CSV, an empty reason is missing).

    Examples
    --------
    >>> apart_reason(float("nan")), apart_reason("answered 3% of the current questions")
    ('', 'answered 3% of the current questions')
    """
    return value if isinstance(value, str) else ""


def format_agreement(agree: float, paired: float, answers: float) -> str:
    """Say on how many answers the two gradings agree, out of those both judged.

    Examples
    --------
    >>> format_agreement(299, 300, 300)
    'the gradings agree on 299 of 300 answers'
    >>> format_agreement(12, 25, 30)
    'the gradings agree on 12 of the 25 answers both judged (of 30)'
    """
    if int(paired) == int(answers):
        return f"the gradings agree on {int(agree)} of {int(paired)} answers"
    return f"the gradings agree on {int(agree)} of the {int(paired)} answers both judged (of {int(answers)})"


def format_answers(n_answers: float, n_distinct: float, rejudged: object) -> str:
    """Count a run's answers; a run whose rounds re-judge one response per question counts its distinct answers.

    Examples
    --------
    >>> format_answers(300, 180, False), format_answers(300, 30, True)
    ('300 answers', '30 distinct answers, each judged 10 times')
    """
    if is_true(rejudged):
        return distinct_answers_phrase(int(n_distinct), int(n_answers))
    return f"{int(n_answers)} answers"


def format_rank(rank: float | None, low: float | None, high: float | None) -> str:
    """Format a rank with its interval, e.g. ``2 (1–4)``.

    Examples
    --------
    >>> format_rank(2.0, 1.0, 4.0), format_rank(3.0, float("nan"), None)
    ('2 (1–4)', '3')
    """
    if is_missing(rank):
        return "—"
    if is_missing(low) or is_missing(high):
        return f"{int(rank)}"
    return f"{int(rank)} ({int(low)}–{int(high)})"


def sort_key(value: float | None) -> float:
    """A sort key for tablesort: missing values sort below every real value."""
    return -1e12 if is_missing(value) else float(value)
