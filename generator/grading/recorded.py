"""``recorded``: a score carried by the submission itself (a published mark)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.verdict import Grader, Verdict


@dataclass(frozen=True)
class RecordedGrader(Grader):
    """Use ``prediction["recorded"][field]``, a score on 0–100 imported from a source.

    Options: ``field`` (required) names the recorded grading to use. A missing
    score counts as 0 with ``verdict_parse = none``; a score outside 0–100 is an
    input error.

    Examples
    --------
    >>> RecordedGrader({"field": "judge"}).grade({"id": "1"}, {"response": "x", "recorded": {"judge": 80}})
    Verdict(score=80.0, verdict_parse='ok', detail='recorded judge = 80', transient=False)
    """

    name: ClassVar[str] = "recorded"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "traditional"
    cached: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if not isinstance(self.options.get("field"), str) or not self.options["field"]:
            raise GraderConfigError(
                f"grader 'recorded' needs options.field (the name under 'recorded' in predictions.jsonl), "
                f"got options {self.options!r} — write e.g. {{name: recorded, options: {{field: judge}}}}"
            )

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        field = self.options["field"]
        value = (prediction.get("recorded") or {}).get(field)
        if value is None:
            return Verdict(0.0, "none", f"no recorded score {field!r}")
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or not 0 <= value <= 100:
            raise GradingInputError(
                f"question {question.get('id')!r} round {prediction.get('round', 0)}: recorded.{field} = {value!r} "
                "is not a number between 0 and 100 — rescale the imported score to 0–100"
            )
        return Verdict(float(value), "ok", f"recorded {field} = {value:g}")
