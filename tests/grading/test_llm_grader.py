"""The llm grader over real HTTP against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from dualboard.grading import VerdictCache, get_grader, grade_benchmark
from dualboard.grading.errors import GraderConfigError, GraderUnavailableError
from dualboard.grading.llm import LlmGrader, fill_prompt, load_prompt
from dualboard.intake.models import GraderSpec
from dualboard.store import LocalStore
from tests.grading.grading_fixtures import make_benchmark, make_run
from tests.grading.judge_server import Reply, ScriptedJudgeServer, always


def llm(server: ScriptedJudgeServer, **options) -> LlmGrader:
    base = {"base_url": server.base_url, "model": "judge-7b", "backoff_s": 0.01, "timeout_s": 2.0}
    return LlmGrader({**base, **options})


def test_request_shape(judge, open_question, monkeypatch) -> None:
    monkeypatch.setenv("DUALBOARD_JUDGE_KEY", "sk-test")
    verdict = llm(judge, api_key_env="DUALBOARD_JUDGE_KEY", seed=7).grade(
        open_question, {"response": "Final answer: Paris"}
    )
    assert verdict.score == 100.0
    (body,) = judge.requests
    assert body["model"] == "judge-7b" and body["temperature"] == 0 and body["seed"] == 7
    assert body["max_tokens"] == 256
    content = body["messages"][0]["content"]
    assert "What is the capital of France?" in content and "Final answer: Paris" in content
    assert "Paris is the capital of France." in content  # the reference answer
    assert judge.headers[0]["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("reply", "score", "parse"),
    [
        ("Same conclusion.\nVerdict {nonce}: pass", 100.0, "ok"),
        ("Verdict {nonce}: FAIL", 0.0, "ok"),
        ("Score: 0", None, "none"),  # no phrase recovery: only the verdict line with the nonce counts
        ("The response is incorrect.", None, "none"),
        ("Verdict: pass", None, "none"),  # no nonce
        ("Hmm, hard to say.", None, "none"),
        ("", None, "none"),
    ],
)
def test_parse_outcomes_over_http(judge, open_question, reply: str, score, parse: str) -> None:
    judge.script = always(reply)
    verdict = llm(judge).grade(open_question, {"response": "Paris"})
    assert (verdict.score, verdict.verdict_parse, verdict.transient) == (score, parse, False)


def test_non_json_body_yields_no_verdict(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(raw_body="<html>oops</html>")
    assert llm(judge).grade(open_question, {"response": "Paris"}).verdict_parse == "none"


def test_500s_and_429s_are_retried_with_backoff(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(status=[500, 429, 503][n]) if n < 3 else Reply("Verdict {nonce}: fail")
    verdict = llm(judge, max_retries=3).grade(open_question, {"response": "Lyon"})
    assert (verdict.score, verdict.verdict_parse) == (0.0, "ok")
    assert len(judge.requests) == 4


def test_persistent_500s_give_a_transient_no_verdict(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(status=500)
    verdict = llm(judge, max_retries=2).grade(open_question, {"response": "Lyon"})
    assert (verdict.score, verdict.verdict_parse, verdict.transient) == (None, "none", True)
    assert "HTTP 500 after 3 tries" in verdict.detail and len(judge.requests) == 3


def test_slow_replies_time_out_then_retry(judge, open_question) -> None:
    judge.script = lambda body, n: Reply("Verdict {nonce}: pass", delay_s=1.0 if n == 0 else 0.0)
    verdict = llm(judge, timeout_s=0.3, max_retries=1).grade(open_question, {"response": "Paris"})
    assert verdict.score == 100.0 and len(judge.requests) == 2
    judge.script = lambda body, n: Reply("Verdict {nonce}: pass", delay_s=1.0)
    slow = llm(judge, timeout_s=0.2, max_retries=0).grade(open_question, {"response": "Paris"})
    assert slow.transient and "timeout" in slow.detail


def test_client_errors_stop_with_a_clear_message(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(status=404, raw_body='{"error": "model not found"}')
    with pytest.raises(GraderUnavailableError, match="HTTP 404.*check options.model"):
        llm(judge).grade(open_question, {"response": "Paris"})


def test_unreachable_endpoint_says_how_to_fix_it(open_question) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    grader = LlmGrader({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "backoff_s": 0.01})
    with pytest.raises(GraderUnavailableError, match="cannot reach .*start the server"):
        grader.grade(open_question, {"response": "Paris"})


def test_missing_api_key_variable(judge, open_question, monkeypatch) -> None:
    monkeypatch.delenv("DUALBOARD_JUDGE_NO_SUCH_KEY", raising=False)
    with pytest.raises(GraderUnavailableError, match="DUALBOARD_JUDGE_NO_SUCH_KEY"):
        llm(judge, api_key_env="DUALBOARD_JUDGE_NO_SUCH_KEY").grade(open_question, {"response": "Paris"})


def test_empty_response_is_not_sent(judge, open_question) -> None:
    verdict = llm(judge).grade(open_question, {"response": "  "})
    assert (verdict.score, verdict.verdict_parse) == (0.0, "none") and judge.requests == []


def test_grade_many_is_concurrent_but_bounded(judge, open_question) -> None:
    judge.script = always("Verdict {nonce}: pass", delay_s=0.1)
    items = [(open_question, {"response": f"Paris {i}"}) for i in range(24)]
    start = time.perf_counter()
    verdicts = llm(judge, max_concurrency=6).grade_many(items)
    elapsed = time.perf_counter() - start
    assert [v.score for v in verdicts] == [100.0] * 24
    assert judge.peak_in_flight == 6
    assert elapsed < 24 * 0.1 / 3  # sequential would take 2.4 s


def test_replies_come_back_in_input_order(judge, open_question) -> None:
    lock = threading.Lock()

    def script(body, n):
        content = body["messages"][0]["content"]
        with lock:
            return Reply(
                "Verdict {nonce}: pass" if "ZZEVEN" in content else "Verdict {nonce}: fail", delay_s=0.05 * (n % 3)
            )

    judge.script = script
    items = [(open_question, {"response": "ZZEVEN" if i % 2 == 0 else "ZZODD"}) for i in range(12)]
    scores = [v.score for v in llm(judge, max_concurrency=4).grade_many(items)]
    assert scores == [100.0, 0.0] * 6


def test_cache_hits_make_no_requests_and_transient_verdicts_are_retried(judge, open_question, tmp_path: Path) -> None:
    spec = GraderSpec("llm", {"base_url": judge.base_url, "model": "judge-7b", "backoff_s": 0.01, "max_retries": 0})
    bench = make_benchmark([open_question], answer_key=(spec,))
    runs = [
        make_run(f"r{i}", [{"question_id": "capital", "response": f"Paris {i}", "recorded": {"judge": 50}}])
        for i in range(3)
    ]
    judge.script = lambda body, n: (
        Reply(status=500) if "Paris 2" in body["messages"][0]["content"] else Reply("Verdict {nonce}: pass")
    )
    first = grade_benchmark(bench, runs, cache=VerdictCache(LocalStore(tmp_path)))
    assert first.scored.answer_key.tolist()[:2] == [100.0, 100.0] and first.scored.answer_key.isna().tolist()[2]
    assert len(judge.requests) == 3
    judge.script = always("Verdict {nonce}: pass")
    second = grade_benchmark(bench, runs, cache=VerdictCache(LocalStore(tmp_path)))
    assert len(judge.requests) == 4  # only the transient failure was asked again
    assert second.scored.answer_key.tolist() == [100.0, 100.0, 100.0]
    grade_benchmark(bench, runs, cache=VerdictCache(LocalStore(tmp_path)))
    assert len(judge.requests) == 4


def test_config_hash_covers_verdict_options_and_prompt_but_not_operational_ones(judge, monkeypatch) -> None:
    base = llm(judge).config_hash
    assert llm(judge, max_concurrency=3, timeout_s=9, max_retries=0).config_hash == base
    assert llm(judge, seed=1).config_hash != base
    assert llm(judge, model="other").config_hash != base
    monkeypatch.setattr(LlmGrader, "template", property(lambda self: "Changed {response}"))
    assert llm(judge).config_hash != base


def test_prompt_is_a_versioned_data_file_and_placeholders_cannot_be_injected(open_question) -> None:
    template = load_prompt("judge_v2")
    assert "{response}" in template and "Verdict {nonce}: pass" in template
    filled = fill_prompt(template, open_question, "I say {reference} and {answer} {nonce}", "n0nce")
    assert "<<<ANSWER n0nce\nI say {reference} and {answer} {nonce}\nANSWER n0nce>>>" in filled
    with pytest.raises(GraderConfigError, match="unknown prompt"):
        load_prompt("judge_v1")  # pasted the response without delimiters: gone
    with pytest.raises(GraderConfigError, match="unknown prompt"):
        load_prompt("../secrets")


@pytest.mark.parametrize(
    "options", [{}, {"base_url": "http://x/v1"}, {"base_url": "http://x/v1", "model": "m", "max_concurrency": 0}]
)
def test_bad_options_are_refused(options) -> None:
    with pytest.raises(GraderConfigError):
        get_grader(GraderSpec("llm", options))


def test_changing_the_judge_seed_regrades_only_llm_verdicts(judge, open_question, tmp_path: Path, monkeypatch) -> None:
    from dualboard.grading.rules import RulesGrader

    calls = []
    original = RulesGrader.grade_many
    monkeypatch.setattr(
        RulesGrader, "grade_many", lambda self, items: calls.append(len(items)) or original(self, items)
    )
    runs = [make_run("r", [{"question_id": "capital", "response": "Paris", "recorded": {"judge": 50}}])]

    def bench(seed):
        llm_spec = GraderSpec("llm", {"base_url": judge.base_url, "model": "m", "seed": seed})
        return make_benchmark([open_question], answer_key=(GraderSpec("rules"), llm_spec))

    grade_benchmark(bench(0), runs, cache=VerdictCache(LocalStore(tmp_path)))
    grade_benchmark(bench(1), runs, cache=VerdictCache(LocalStore(tmp_path)))
    assert len(judge.requests) == 2 and [r["seed"] for r in judge.requests] == [0, 1]
    assert calls == [1]


def test_retry_after_is_honoured(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(status=429, headers=(("Retry-After", "0.4"),)) if n == 0 else Reply()
    start = time.perf_counter()
    verdict = llm(judge, backoff_s=0.01).grade(open_question, {"response": "Paris"})
    assert verdict.score == 100.0 and time.perf_counter() - start >= 0.4


def test_verdicts_graded_before_the_endpoint_fails_are_kept(judge, open_question, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(LlmGrader, "batch_size", 2)
    spec = GraderSpec("llm", {"base_url": judge.base_url, "model": "m", "max_concurrency": 1})
    bench = make_benchmark([open_question], answer_key=(spec,))
    runs = [
        make_run(f"r{i}", [{"question_id": "capital", "response": f"Paris {i}", "recorded": {"judge": 1}}])
        for i in range(4)
    ]
    judge.script = lambda body, n: Reply(status=401, raw_body="{}") if n >= 2 else Reply()
    with pytest.raises(GraderUnavailableError, match="HTTP 401"):
        grade_benchmark(bench, runs, cache=VerdictCache(LocalStore(tmp_path)))
    first_build = len(judge.requests)  # the failing batch's other request was in flight already
    judge.script = lambda body, n: Reply()
    grade_benchmark(bench, runs, cache=VerdictCache(LocalStore(tmp_path)))
    assert len(judge.requests) - first_build == 2  # the first batch's two verdicts were kept
