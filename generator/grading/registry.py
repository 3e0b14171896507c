"""The one list of graders a ``benchmark.yaml`` may name.

Every grader class is listed here explicitly; :func:`build_registry` refuses
duplicate names, so two graders can never answer to the same name.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping

from dualboard.errors import Finding
from dualboard.grading.embedding import EmbeddingGrader
from dualboard.grading.errors import GraderConfigError
from dualboard.grading.exact import ExactGrader, NumericGrader
from dualboard.grading.human import HumanGrader
from dualboard.grading.llm import LlmGrader
from dualboard.grading.mc_letter import McLetterGrader
from dualboard.grading.recorded import RecordedGrader
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Grader
from dualboard.intake.models import Benchmark, GraderSpec
from dualboard.linear_regex import compile_linear

GRADER_CLASSES: tuple[type[Grader], ...] = (
    McLetterGrader,
    RecordedGrader,
    ExactGrader,
    NumericGrader,
    RulesGrader,
    EmbeddingGrader,
    LlmGrader,
    HumanGrader,
)
"""Every grader, in the order the documentation lists them."""


def build_registry(classes: Iterable[type[Grader]]) -> Mapping[str, type[Grader]]:
    """Map grader names to classes, raising on a duplicate name."""
    registry: dict[str, type[Grader]] = {}
    for cls in classes:
        if cls.name in registry:
            raise GraderConfigError(
                f"two graders are named {cls.name!r} ({registry[cls.name].__name__} and {cls.__name__}) — "
                "rename one in generator/grading/registry.py"
            )
        registry[cls.name] = cls
    return registry


REGISTRY: Mapping[str, type[Grader]] = build_registry(GRADER_CLASSES)


def get_grader(spec: GraderSpec) -> Grader:
    """Build the grader a benchmark asks for.

    Raises
    ------
    GraderConfigError
        When the name is unknown (the message lists the known ones) or the
        options are invalid.
    """
    cls = REGISTRY.get(spec.name)
    if cls is None:
        known = ", ".join(sorted(REGISTRY))
        raise GraderConfigError(f"unknown grader {spec.name!r} in benchmark.yaml — use one of: {known}")
    return cls(dict(spec.options or {}))


_ROLE = compile_linear(r":[a-z]+:`~?(?:[A-Za-z_][A-Za-z0-9_]*\.)*([^`]+)`")


def grader_findings(benchmark: Benchmark) -> list[Finding]:
    """Build every grader ``benchmark.yaml`` names; return a finding for each that refuses its options.

    ``dualboard validate`` reports them, so a bad option fails review rather than grading.
    """
    file = str(benchmark.path / "benchmark.yaml") if benchmark.path else "benchmark.yaml"
    specs: list[GraderSpec] = []
    for spec in [*benchmark.traditional.values(), *benchmark.answer_key]:
        if spec not in specs:  # one traditional entry stands for every question type
            specs.append(spec)
    findings = []
    for spec in specs:
        try:
            get_grader(spec)
        except GraderConfigError as exc:
            findings.append(Finding(file, None, f"graders.{spec.name}", str(exc), "correct the grader's options"))
    return findings


def _description(cls: type[Grader]) -> str:
    """The docstring's prose before its first numpy section (Examples, Parameters), one line per paragraph."""
    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    # A numpy section is a title line underlined with dashes.
    end = next((i for i in range(len(lines) - 1) if lines[i + 1].startswith("---") and lines[i].strip()), len(lines))
    paragraphs = "\n".join(lines[:end]).split("\n\n")
    text = "\n\n".join(" ".join(part.split()) for part in paragraphs if part.strip())
    # readers of the site, not of the source: ":func:`~a.b.load`" reads "load", "``x``" reads "x"
    return _ROLE.sub(r"\1", text).replace("``", "")


def describe_graders() -> list[dict[str, str]]:
    """Return name, version, default role, one-line summary and full rule of every grader.

    For the site's pages (mkdocs-macros, the graders page), so what each grader
    does is generated from the code, never kept in sync by hand. ``rule`` is the
    grader's :attr:`~dualboard.grading.verdict.Grader.rule` where it states one
    (``rules``: what it judges and when it gives no verdict), else its
    docstring's description.

    Examples
    --------
    >>> [g["name"] for g in describe_graders()][:3]
    ['mc_letter', 'recorded', 'exact']
    >>> next(g for g in describe_graders() if g["name"] == "rules")["rule"][:40]
    'rules judges only what it can read; othe'
    """
    return [
        {
            "name": cls.name,
            "version": cls.version,
            "role": cls.default_role,
            "summary": (cls.__doc__ or "").strip().splitlines()[0],
            "rule": cls.rule or _description(cls),
        }
        for cls in GRADER_CLASSES
    ]
