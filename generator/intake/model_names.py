"""Model names as a reader sees them: no hidden characters, no look-alikes, a shared name told apart by revision.

A run's ``model`` is what the leaderboard, the home page's leader, the run and question pages and the preview
show, so a pull request could borrow another run's standing by naming its model like it: ``aurora-lm-70b`` again, or
``аurora-lm-70b`` with a Cyrillic ``а``, ``delta\\u200b-mind-34b`` with a zero-width space, or a right-to-left
override that makes the text display reversed. So:

* names are compared by :func:`name_key` (NFKC, case-folded, white space collapsed): two that differ only in width,
  compatibility forms, case or spacing are one name;
* a name or revision may hold no control, format (zero-width, bidirectional), default-ignorable (such as the
  Hangul filler) or unassigned character (:func:`hidden_characters`);
* two runs of a benchmark may share a name only when both state distinct ``model_revision``\\ s, and the site then
  shows the name with the revision (:func:`shown_models`);
* two different names that share a Unicode TR39 skeleton, as written, lower- or upper-cased, are look-alikes
  (:func:`skeletons`, ICU's ``SpoofChecker``, which implements TR39): one of them is a finding; so are two
  revisions of a shared name that look alike.
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import icu

from dualboard.errors import Finding
from dualboard.intake.models import Run

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Control, format (zero-width and bidirectional controls), surrogate, private-use and unassigned characters, and
line and paragraph separators: none shows as itself."""


def name_key(name: str) -> str:
    """The form two names are compared in: NFKC, case-folded (and NFKC again, as case folding may undo it), its
    white space collapsed (a trailing space does not make another name).

    Examples
    --------
    >>> name_key("Aurora-LM-70B") == name_key("ａｕｒｏｒａ-lm-70b") == name_key(" aurora-lm-70b ") == "aurora-lm-70b"
    True
    """
    return " ".join(unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold()).split())


def hidden_characters(name: str) -> list[str]:
    """The characters of ``name`` that do not show as themselves, as ``U+200B ZERO WIDTH SPACE``.

    Examples
    --------
    >>> hidden_characters("delta\\u200b-mind-34b"), hidden_characters("\\u202eb07-ml-arorua")
    (['U+200B ZERO WIDTH SPACE'], ['U+202E RIGHT-TO-LEFT OVERRIDE'])
    >>> hidden_characters("aurora-lm-70b\u3164"), hidden_characters("Modèle-7B")
    (['U+3164 HANGUL FILLER'], [])
    """
    return [
        f"U+{ord(ch):04X} {unicodedata.name(ch, 'unassigned')}"
        for ch in dict.fromkeys(name)
        if unicodedata.category(ch) in HIDDEN_CATEGORIES
        or icu.Char.hasBinaryProperty(ch, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT)
    ]


@cache
def _checker() -> icu.SpoofChecker:
    return icu.SpoofChecker()


def skeletons(name: str) -> frozenset[str]:
    """The TR39 skeletons of ``name`` as written, lower- and upper-cased (white space collapsed): two names that
    share one look alike. TR39 maps ``I`` and ``l`` together, and ``0`` and ``O``, but not ``o`` and ``O``, so one
    case alone misses ``aurora-Im-70b`` or ``AURORA-LM-7OB``.

    Examples
    --------
    >>> real = skeletons("aurora-lm-70b")
    >>> [bool(real & skeletons(n)) for n in ("\u0430urora-lm-70b", "aurora-Im-70b", "aurora-lm-7Ob", "AURORA-LM-7OB")]
    [True, True, True, True]
    >>> pairs = [("delta-mind-34b", "de1ta-mind-34b"), ("gale-8x7b", "gale-8x22b")]
    >>> [bool(skeletons(a) & skeletons(b)) for a, b in pairs]
    [True, False]
    """
    written = " ".join(unicodedata.normalize("NFKC", name).split())
    return frozenset(_checker().getSkeleton(0, form) for form in (written, name_key(written), written.upper()))


@dataclass(frozen=True)
class NamedRun:
    """What a run's metadata.yaml names: where, the model, its revision, and the line of ``model``."""

    run_dir: Path
    model: str
    revision: str | None = None
    line: int | None = None

    @property
    def run_id(self) -> str:
        return self.run_dir.name


def hidden_character_findings(metadata: dict, file: str, lines: dict[str, int]) -> list[Finding]:
    """A finding for ``model`` or ``model_revision`` holding a character that does not show as itself."""
    findings = []
    for field in ("model", "model_revision"):
        hidden = hidden_characters(metadata[field]) if isinstance(metadata.get(field), str) else []
        if hidden:
            findings.append(
                Finding(
                    file,
                    lines.get(field),
                    field,
                    f"holds characters that do not show as themselves ({', '.join(hidden)}): the name could pass "
                    "for another, or display reversed",
                    f"write {field} with visible characters only",
                )
            )
    return findings


def clash_findings(runs: list[NamedRun], new: Collection[Path]) -> list[Finding]:
    """A finding for each pair of a benchmark's runs whose model names a reader could not tell apart.

    The same name (:func:`name_key`) is allowed only with two distinct ``model_revision``\\ s; a different name
    with the same :func:`skeleton` never is. As for a clash of run ids, the finding is at each run of ``new`` (the
    pull request's) in the pair, naming the other, and a pair none of which is new is left alone when some run is
    new; with no run new (a build, or a check of the whole board), at both runs, as nothing tells which came last.
    """
    groups: dict[str, list[NamedRun]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: r.run_id):
        for key in skeletons(run.model):  # the same name shares every skeleton: only these pairs can clash
            groups[key].append(run)
    pairs = dict.fromkeys(pair for group in groups.values() for pair in combinations(group, 2))
    findings = []
    for a, b in pairs:
        clash = _clash(a, b)
        at = [run for run in (a, b) if run.run_dir in new] or ([] if new else [a, b])
        for run in at if clash else ():
            other = b if run is a else a
            problem, fix = clash
            findings.append(
                Finding(
                    str(run.run_dir / "metadata.yaml"),
                    run.line,
                    "model",
                    f"model {run.model!r} {problem} {other.model!r}, the model of run {other.run_id}",
                    fix,
                )
            )
    return findings


def _clash(a: NamedRun, b: NamedRun) -> tuple[str, str] | None:
    """How two runs sharing a skeleton clash (problem, fix): the same name without distinct revisions (two
    revisions that look alike are not distinct), or look-alikes."""
    if name_key(a.model) != name_key(b.model):
        return "looks like (the same Unicode TR39 skeleton as)", "name the model as it is published, in plain letters"
    if not (a.revision and b.revision) or skeletons(a.revision) & skeletons(b.revision):
        return (
            "is the name, without two distinct model_revisions (revisions that look alike are not distinct), of",
            "state model_revision in both runs' metadata.yaml, differing, or name a different model",
        )
    return None


def shown_models(runs: Iterable[Run]) -> dict[str, str]:
    """The model name the site shows for each run id: with its revision, ``name (revision)``, where it is shared.

    Examples
    --------
    >>> runs = [Run("b", r, {"model": m, "model_revision": v}, ()) for r, m, v in [("a", "m", "v1"), ("b", "M", "v2")]]
    >>> shown_models([*runs, Run("b", "c", {"model": "n"}, ())])
    {'a': 'm (v1)', 'b': 'M (v2)', 'c': 'n'}
    """
    runs = list(runs)
    counts = Counter(name_key(run.model) for run in runs)
    return {
        run.run_id: f"{run.model} ({run.metadata['model_revision']})"
        if counts[name_key(run.model)] > 1 and run.metadata.get("model_revision")
        else run.model
        for run in runs
    }


def with_shown_models(models: Any, runs: Iterable[Run]) -> Any:
    """A table with ``run_id`` and ``model`` columns (pandas), its models named as :func:`shown_models` shows them."""
    shown = shown_models(runs)
    return models.assign(model=[shown.get(str(r), m) for r, m in zip(models["run_id"], models["model"], strict=True)])
