"""Run one job of a GitHub workflow on this machine, its ``run:`` blocks as the scripts GitHub runs.

Only what a test can stand in for honestly is supported, and anything else fails the test with
what to teach here, so a workflow change cannot silently skip a step:

- ``run:`` steps run as ``bash --noprofile --norc -eo pipefail`` (GitHub's default shell on Linux)
  with the workflow's, job's and step's ``env:``, the variables earlier steps wrote to ``$GITHUB_ENV``, and
  ``$GITHUB_ENV`` / ``$GITHUB_OUTPUT`` / ``$GITHUB_STEP_SUMMARY`` files;
- ``${{ … }}`` in ``env:`` values are looked up in the ``context`` the test gives (a pull request's
  ``github.event.pull_request.base.sha`` and so on);
- ``if:`` understands ``always()``, ``success()``, ``failure()`` and ``env.NAME ==``/``!= 'value'``;
- ``uses:`` steps are the caller's: ``actions`` maps an action (``actions/checkout``) to a function
  given the step, which stands in for it (the checkout is the folder the job runs in, the venv on
  PATH is setup-python…).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
ENV_TEST = re.compile(r"^env\.(\w+)\s*(==|!=)\s*'([^']*)'$")
SHELL = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


@dataclass
class StepResult:
    name: str
    ran: bool
    returncode: int = 0
    output: str = ""


def load_steps(workflow: Path, job: str | None = None) -> list[dict]:
    """The steps of ``job`` in ``workflow`` (of its only job when ``job`` is None), the job's ``env:`` in each."""
    doc = yaml.safe_load(workflow.read_text("utf-8"))
    [name] = [job] if job else list(doc["jobs"])
    spec = doc["jobs"][name]
    unsupported = {"defaults", "container", "services", "strategy"} & (set(spec) | set(doc))
    if unsupported:
        pytest.fail(f"{workflow.name}: teach tests/workflows/job_runner.py {sorted(unsupported)}")
    shared = {**(doc.get("env") or {}), **(spec.get("env") or {})}
    return [{**step, "env": {**shared, **(step.get("env") or {})}} for step in spec["steps"]]


def run_job(
    steps: list[dict],
    cwd: Path,
    env: dict[str, str],
    context: dict[str, str],
    actions: dict[str, Callable[[dict], None]],
    timeout: float = 600,
) -> list[StepResult]:
    """Run ``steps`` in ``cwd`` as GitHub would for one job; return what each step did."""
    files = {
        name: cwd.parent / f"{cwd.name}.{name.lower()}"
        for name in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
    }
    for path in files.values():
        path.write_text("", "utf-8")
    results: list[StepResult] = []
    for index, step in enumerate(steps):
        name = step.get("name") or step.get("uses") or f"step {index + 1}"
        unsupported = {"shell", "working-directory", "continue-on-error"} & set(step)
        if unsupported:
            pytest.fail(f"step {name!r}: teach tests/workflows/job_runner.py {sorted(unsupported)}")
        failed = any(r.returncode != 0 for r in results)
        job_env = _read_env_file(files["GITHUB_ENV"])
        if not _condition(step.get("if"), failed, job_env, name):
            results.append(StepResult(name, ran=False))
            continue
        if "uses" in step:
            action = step["uses"].split("@")[0]
            if action not in actions:
                pytest.fail(f"step {name!r} uses {action}: tell the test how to stand in for it (actions=)")
            actions[action](step)
            results.append(StepResult(name, ran=True))
            continue
        step_env = {key: _expand(str(value), context, name) for key, value in (step.get("env") or {}).items()}
        full_env = {**env, **job_env, **step_env, **{k: str(v) for k, v in files.items()}}
        proc = subprocess.run(
            [*SHELL, "-c", step["run"]], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
        )
        results.append(StepResult(name, ran=True, returncode=proc.returncode, output=proc.stdout + proc.stderr))
    return results


def _condition(expression, failed: bool, job_env: dict[str, str], name: str) -> bool:
    """Whether a step with ``if: expression`` runs (GitHub's default is ``success()``)."""
    if expression is None:
        return not failed
    text = EXPRESSION.sub(r"\1", str(expression)).strip()
    if text == "always()":
        return True
    if text in ("success()", "failure()"):
        return failed == (text == "failure()")
    match = ENV_TEST.match(text)
    if not match:
        pytest.fail(f"step {name!r}: teach tests/workflows/job_runner.py the condition {expression!r}")
    value = job_env.get(match[1], "")
    return not failed and ((value == match[3]) == (match[2] == "=="))


def _expand(value: str, context: dict[str, str], name: str) -> str:
    def lookup(match: re.Match) -> str:
        if match[1] not in context:
            pytest.fail(f"step {name!r}: give the test a value for ${{{{ {match[1]} }}}} (context=)")
        return context[match[1]]

    return EXPRESSION.sub(lookup, value)


def _read_env_file(path: Path) -> dict[str, str]:
    """Variables written to ``$GITHUB_ENV``: ``NAME=value`` lines and ``NAME<<DELIMITER`` blocks."""
    values, lines = {}, iter(path.read_text("utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            block = []
            for item in lines:
                if item == delimiter:
                    break
                block.append(item)
            values[key] = "\n".join(block)
        elif "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
    return values
