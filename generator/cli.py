"""The ``dualboard`` command line: thin commands over the pipeline stages.

Each command parses its arguments, calls one library function and reports
the result. Library errors (DualboardError) become messages, never tracebacks:
the command group converts them, in one place (:class:`DualboardCommands`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import time
import webbrowser
from pathlib import Path

import click

from dualboard import __version__, pipeline
from dualboard.atomic import atomic_write_text
from dualboard.build_cache import BuildCache
from dualboard.errors import DualboardError, InvalidInputError
from dualboard.intake.validate import Limits, ValidationReport
from dualboard.names import HUB_REPO_ID, RUN_ID_RULE, is_name, is_run_name
from dualboard.project import CONFIG_FILE, Project
from dualboard.stats.defaults import SEED
from dualboard.store import LocalStore, Store

# Commands that preview, import, serve or simulate import what they need when they run, so that
# `dualboard build` with every stage done starts in a fraction of the time (pipeline does the same).

EXIT_INVALID = 1
"""Exit code of invalid input, a library error included (click's usage errors exit 2)."""
ROOT_KEY = "dualboard.root"
"""Where ``--root`` is kept in the click context, for showing findings relative to it."""
HUB_ENDPOINT = "https://huggingface.co"


def root_option(command):
    """Add ``--root DIR`` (the leaderboard folder) and pass a Project."""

    @click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("."),
        show_default=True,
        help="Leaderboard folder holding data/ and submissions/.",
    )
    @functools.wraps(command)
    def wrapper(root: Path, **kwargs):
        click.get_current_context().meta[ROOT_KEY] = root.resolve()  # findings are shown relative to it (_message)
        return command(project=Project(root.resolve()), **kwargs)

    return wrapper


def hub_options(command):
    """Add ``--hub ORG/NAME`` and ``--hub-endpoint URL`` (passed on as ``hub_repo`` and ``hub_endpoint``)."""
    command = click.option(
        "--hub-endpoint",
        metavar="URL",
        envvar="DUALBOARD_HUB_ENDPOINT",
        default=None,
        help=f"Hub address (env DUALBOARD_HUB_ENDPOINT; default: store.endpoint in {CONFIG_FILE}, "
        f"else {HUB_ENDPOINT}). The option wins over {CONFIG_FILE}, which a pull request can edit: "
        "CI passes it explicitly.",
    )(command)
    return click.option(
        "--hub",
        "hub_repo",
        metavar="ORG/NAME",
        callback=_check_repo_id,
        default=None,
        help=f"Use this Hugging Face Hub dataset as the store (default: store.hub in {CONFIG_FILE}, "
        "else the local store).",
    )(command)


jobs_option = click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that grade runs side by side (default: one per core). Results are the same for any number.",
)
"""``--jobs N`` of the commands that grade (grade, build)."""


def store_option(command):
    """Add ``--hub``, ``--hub-endpoint``, ``--hub-revision`` and ``--stage``; pass the chosen Store.

    Without ``--hub`` (or ``store.hub`` in dualboard.yaml) the embedded local
    store under .dualboard/store is used.
    The Hub token comes from the HF_TOKEN environment variable only.
    """

    @hub_options
    @click.option(
        "--hub-revision",
        metavar="REV",
        default=None,
        help="Read this tag or commit of the Hub dataset (default: the head of main).",
    )
    @click.option(
        "--stage",
        is_flag=True,
        help="With --hub: only read the dataset (no token needed for a public one) and keep ingested runs "
        "and new verdicts in .dualboard/hub-pending/ for `dualboard publish`, which pushes them. "
        "Without --stage, ingest commits to the dataset and needs HF_TOKEN.",
    )
    @functools.wraps(command)
    def wrapper(
        project: Project, hub_repo: str | None, hub_endpoint: str, hub_revision: str | None, stage: bool, **kwargs
    ):
        store = _choose_store(project, hub_repo, hub_endpoint, hub_revision, stage=stage)
        return command(project=project, store=store, **kwargs)

    return wrapper


def _check_repo_id(ctx, param, value: str | None) -> str | None:
    if value is not None and not HUB_REPO_ID.fullmatch(value):
        raise click.BadParameter(
            f"{value!r} is not ORG/NAME (letters, digits, '-', '_', '.'), e.g. my-org/my-leaderboard"
        )
    return value


def _choose_store(
    project: Project, hub_repo: str | None, endpoint: str | None, revision: str | None, *, stage: bool = False
) -> Store:
    settings = project.store_settings()
    hub_repo = _check_repo_id(None, None, hub_repo or settings.hub)
    endpoint = endpoint or settings.endpoint or HUB_ENDPOINT
    if hub_repo is None:
        for flag, value in (("--hub-revision", revision), ("--stage", stage)):
            if value:
                raise click.UsageError(f"{flag} needs --hub ORG/NAME")
        return LocalStore(project.store_dir)
    from dualboard.store.hub import (
        HubStore,  # imports huggingface_hub only when asked for
    )
    from dualboard.store.staged import StagedHubStore

    hub = HubStore(
        hub_repo,
        endpoint=endpoint,
        revision=revision,
        cache_dir=project.hub_cache_dir,
        pending_dir=project.hub_pending_dir,
    )
    return StagedHubStore(hub, project.hub_pending_dir) if stage else hub


class DualboardCommands(click.Group):
    """The ``dualboard`` command group; it turns the library errors of every command into messages.

    A DualboardError raised anywhere under a command (by the library, or by
    the store chosen for it) ends the command with its message and exit code
    :data:`EXIT_INVALID`, never a traceback. This is the only place that
    converts them, so commands call the library directly.
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DualboardError as exc:
            error = click.ClickException(_message(exc, ctx.meta.get(ROOT_KEY)))
            error.exit_code = EXIT_INVALID
            raise error from exc


def _message(exc: DualboardError, root: Path | None) -> str:
    """The text a library error shows, with no control character that could drive the terminal.

    Findings name their files relative to the leaderboard folder, one line
    each: a line break inside one (a folder named by a submitter) is shown as
    ``\\n`` rather than starting a line that could pass for another finding.
    """
    if not isinstance(exc, InvalidInputError):
        return "\n".join(_printable(line) for line in str(exc).split("\n"))
    shown = InvalidInputError([f.relative_to(root) for f in exc.findings]) if root is not None else exc
    head = str(shown).split("\n", 1)[0]
    return "\n".join([head, *(_printable(str(f)) for f in shown.findings)])


@click.group(cls=DualboardCommands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dualboard")
def main():
    """Dualboard: a static leaderboard for LLM benchmarks, graded twice.

    Runs submitted under submissions/<benchmark>/<run>/ are validated,
    ingested into a store, graded under traditional and answer-key grading,
    analysed with paired question-level statistics and rendered into a
    static site.

    \b
    Quick start (in a folder with data/ and submissions/):
      dualboard build      # validate → ingest → grade → stats → render
      dualboard serve      # preview the site on http://127.0.0.1:8000/
    """


@main.command()
@root_option
@store_option
@click.option(
    "--seed", type=int, default=SEED, show_default=True, help="Seed of every bootstrap, published on the site."
)
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
@jobs_option
@click.option(
    "--force",
    is_flag=True,
    help="Redo every stage, validate and grade every run, even what is unchanged since the last build.",
)
def build(project: Project, store: Store, seed: int, progress: bool, jobs: int | None, force: bool):
    """Run every stage: validate → ingest → grade → stats → render.

    The site is written to site/ (the previous one stays until the new one is
    complete). Same inputs and seed give the same scored data and site.

    \b
    Only what changed is redone. Every stage compares content hashes (sha256)
    of what it reads with those of its last success, kept in
    .dualboard/build-cache.json, and prints a line for what it skipped:
      validate   a run with the same files, benchmark and code is not read again
      ingest     a store that holds every file already is not written
      grade      skipped while the store's content is what it graded
      stats      skipped while build/scored and the seed are unchanged
      render     skipped while its inputs are unchanged and site/ is intact
    A stage whose outputs were changed or deleted runs again. --force
    ignores the cache (a deleted or corrupt cache file is ignored too) and
    grades every run anew, whatever build/scored holds.
    """
    started = time.perf_counter()
    cache = pipeline.open_cache(project, force=force)
    click.echo(str(pipeline.validate(project, cache=cache)))
    _ingest(project, store, cache)
    graded = pipeline.grade_stage(project, store, progress=progress, jobs=jobs, cache=cache, fresh=force)
    click.echo(str(graded))
    # The answers' data files (most of a render's work) do not depend on the statistics: when the grade changed
    # something, a worker begins them while this process computes the statistics.
    with pipeline.answers_ahead(project, store, cache) if not graded.skipped else contextlib.nullcontext() as ahead:
        click.echo(str(pipeline.stats(project, seed=seed, cache=cache, force=force)))
        click.echo(str(pipeline.render(project, store, cache=cache, ahead=ahead)))
    click.echo(f"Built in {time.perf_counter() - started:.1f} s. Preview with: dualboard serve --root {project.root}")


@main.command()
@root_option
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: one finding per line; json: one document for machines.",
)
@click.option(
    "--max-predictions-bytes",
    type=click.IntRange(min=1, max=Limits.predictions_bytes),
    default=Limits.predictions_bytes,
    show_default=True,
    help="Largest accepted predictions.jsonl: the build's limit (the default) or a stricter one.",
)
@click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1, max=Limits.response_bytes),
    default=Limits.response_bytes,
    show_default=True,
    help="Largest accepted single response (UTF-8 bytes): the build's limit (the default) or a stricter one.",
)
def validate(
    project: Project, paths: tuple[Path, ...], output_format: str, max_predictions_bytes: int, max_response_bytes: int
):
    """Check submissions without changing anything.

    PATHS are run folders, benchmark folders under submissions/, or the
    submissions folder itself (the default). Every problem of every run is
    listed in one pass, in plain words, as file:line: field: problem — fix,
    with files relative to the leaderboard folder (--root).

    Exit code 0 when valid, 1 when not, 2 on a usage error. Runs that passed
    before without a finding, byte for byte, are not read again (the only file
    written is that record, .dualboard/build-cache.json).
    """
    limits = Limits(predictions_bytes=max_predictions_bytes, response_bytes=max_response_bytes)
    cache = pipeline.open_cache(project)
    report = pipeline.check_pull_request(project, list(paths) or None, limits, cache=cache)
    cache.save()
    if output_format == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        _echo_report(report)
    if not report.ok:
        raise SystemExit(EXIT_INVALID)


def _echo_report(report: ValidationReport) -> None:
    for finding in report.findings:  # a warning says so: it is reported and accepted, unlike the problems
        click.echo(("warning: " if finding.severity == "warning" else "") + _printable(str(finding)))
    answers = sum(len(r.predictions) for r in report.runs)
    warnings = len(report.findings) - len(report.errors)
    also = f" ({warnings} warning(s), accepted)" if warnings else ""
    if report.ok:
        click.echo(f"valid: {len(report.runs)} runs, {answers} answers{also}")
    else:
        click.echo(f"invalid: {len(report.errors)} problem(s){also} — fix them and validate again; nothing was changed")


def _printable(text: str) -> str:
    """Show control characters of untrusted text as escapes, so they cannot drive the terminal."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)


@main.command()
@root_option
@store_option
def ingest(project: Project, store: Store):
    """Make the store hold the runs of submissions/, atomically.

    Valid runs are added or replaced; a stored run whose folder was deleted
    from submissions/ leaves the store (the changelog says "removed", dated by
    the commit that deleted it). Nothing is written unless every run is valid.
    With --hub, one Hub commit holds the whole ingest.
    """
    _ingest(project, store)


def _ingest(project: Project, store: Store, cache: BuildCache | None = None) -> None:
    """Ingest submissions/ and report it, with every store call that passed only on a retry (on stderr)."""
    summary = pipeline.ingest(project, store, today=_today(), cache=cache)[0]
    for line in store.retried_calls():
        click.echo(f"  retried: {line}", err=True)
    click.echo(str(summary))


def _today() -> str:
    """The current UTC date, ``YYYY-MM-DD`` (the one clock the commands read)."""
    return dt.datetime.now(dt.UTC).date().isoformat()


class RunName(click.ParamType):
    """``BENCHMARK/RUN_ID``, both valid names."""

    name = "BENCHMARK/RUN"

    def convert(self, value, param, ctx):
        if not is_run_name(value):
            self.fail(f"{value!r} is not BENCHMARK/RUN_ID (each {RUN_ID_RULE}), e.g. demo/fjord-3b", param, ctx)
        return value


class IsoDate(click.ParamType):
    """A calendar date written ``YYYY-MM-DD``."""

    name = "YYYY-MM-DD"

    def convert(self, value, param, ctx):
        try:
            if len(value) == 10:
                return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
        self.fail(f"{value!r} is not a date written YYYY-MM-DD, e.g. 2026-11-30", param, ctx)


@main.command()
@root_option
@hub_options
@click.argument("run", type=RunName())
@click.option("--reason", required=True, help="Why the run leaves; shown on the site's changelog.")
@click.option(
    "--date",
    "removed",
    type=IsoDate(),
    default=None,
    show_default="today in UTC",
    help="Date of the removal, for the changelog.",
)
def remove(
    project: Project, hub_repo: str | None, hub_endpoint: str | None, run: str, reason: str, removed: str | None
):
    """Withdraw RUN (BENCHMARK/RUN_ID) from the store, with a reason for the changelog.

    For a store fed without a checkout, e.g. a Hub dataset (--hub ORG/NAME,
    HF_TOKEN set): one commit removes the run's files and records the reason
    and date in removed/BENCHMARK/RUN_ID.json. The next release's changelog
    lists the run as removed, with the reason.

    In a leaderboard repository submissions/ is the source of truth: deleting
    the run's folder is the way, and the next build removes it. This command
    refuses while the folder still exists; run it after deleting the folder
    (before building) to record a reason.

    \b
    Example:
      git rm -r submissions/demo/fjord-3b
      dualboard remove demo/fjord-3b --reason "answers leaked into training data"
    """
    store = _choose_store(project, hub_repo, hub_endpoint, None)
    click.echo(str(pipeline.remove(project, store, run, reason=reason, date=removed or _today())))


@main.command()
@root_option
@hub_options
@click.option(
    "--release", "version", required=True, metavar="VERSION", help="Release tag, e.g. 2026.1 (frozen once made)."
)
def publish(project: Project, hub_repo: str | None, hub_endpoint: str | None, version: str):
    """Upload release VERSION and what the build staged to the Hub in one commit, and tag it.

    Needs --hub ORG/NAME and a write token in HF_TOKEN; the commands before it
    need no token:

    \b
      dualboard build --hub ORG/NAME --stage                  # reads the dataset, stages runs and verdicts
      dualboard release VERSION --hub ORG/NAME --stage        # freezes releases/VERSION/, deploys the site
      dualboard publish --hub ORG/NAME --release VERSION      # uploads them

    One commit holds releases/VERSION/ exactly as `dualboard release` froze
    it (each file checked against its SHA256SUMS), under releases/VERSION/ of
    the dataset; the release's dataset card at the dataset's root, so that
    `datasets.load_dataset(ORG/NAME, "scored", revision=VERSION,
    split="train")` reads it (configs scored, verdicts, answers); and the
    staged runs and verdict cache (.dualboard/hub-pending/; the cache lies under
    verdicts/ at the root, apart from the release's tables), deleting the runs
    that left submissions/. Its parent is the
    commit the build read (build/store-source.json), which must be the one the
    release froze: if the dataset moved on since, the Hub refuses the commit
    and nothing is written. The commit is tagged VERSION.
    """
    from dualboard.release.publish import publish as push
    from dualboard.store.hub import HubStore
    from dualboard.store.staged import StagedHubStore

    hub = _choose_store(project, hub_repo, hub_endpoint, None)
    if not isinstance(hub, HubStore):
        raise click.UsageError("publish needs --hub ORG/NAME: releases go to a Hugging Face Hub dataset")
    store = StagedHubStore(hub, project.hub_pending_dir)
    result = push(store, project.root, project.build_dir, version)
    click.echo(
        f" publish: {len(result.files)} files, tagged {result.version} at {result.revision[:12]} "
        f"on {store.hub.repo_id} ({store.hub.endpoint})"
    )


@main.command()
@root_option
@hub_options
@click.option(
    "--hub-revision",
    metavar="REV",
    default=None,
    help="With --hub: place the runs on this tag or commit of the dataset (default: the head of main).",
)
@click.argument(
    "run_dirs", nargs=-1, metavar="[RUN_DIR]...", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--base",
    metavar="REV",
    default=None,
    help="Git revision the runs are compared against (CI: the pull request's base commit). Without "
    "RUN_DIR, previews the runs changed since REV and validates all of submissions/; with the local "
    "store, the board is REV's submissions/ instead of .dualboard/store.",
)
@click.option(
    "--json",
    "json_path",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the preview as a dualboard-preview/3 JSON document (what the comment workflow renders).",
)
@click.option("--seed", type=int, default=SEED, show_default=True, help="Seed of every bootstrap.")
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
def preview(
    project: Project,
    hub_repo: str | None,
    hub_endpoint: str | None,
    hub_revision: str | None,
    run_dirs: tuple[Path, ...],
    base: str | None,
    json_path: Path | None,
    seed: int,
    progress: bool,
):
    """Show where runs would land on the leaderboard, before they are merged.

    Validates each RUN_DIR (submissions/<benchmark>/<run_id>/) with everything
    else a pull request can change, grades it with the verdict cache together
    with the runs already on the board, and prints for each run: its score
    under both gradings with 95% intervals, "rank N of M" with the rank
    interval, the paired difference to the leader, the grader coverage and
    any findings. Nothing is written to the store. With --base, it lists every
    run added, changed or removed since REV and how the other runs' scores and
    ranks move; a pull request may only add run folders, so a changed or
    removed run, a file changed outside submissions/<benchmark>/<new run>/
    (unless REV's dualboard.yaml allows it under pull_requests.allowed_paths)
    and a git attribute, ignore or config file are errors.

    \b
    The current board, read without any token:
      --hub ORG/NAME      the published Hub dataset, read anonymously (also
                          when dualboard.yaml names it)
      --base REV          REV's submissions/ (a leaderboard with a local store)
      neither             the local store, as your last `dualboard build` left it

    \b
    Examples:
      dualboard preview submissions/demo/my-run
      dualboard preview --base origin/main --json preview.json     # what CI runs

    Exit code 0 when every run was placed, 1 when validation failed or the
    board could not be graded (the JSON says why), 2 on a usage error.
    """
    if base is None and not run_dirs:
        raise click.UsageError(
            "name the runs to preview (RUN_DIR...), or pass --base REV to preview the runs changed since REV"
        )
    from dualboard import preview as board_preview

    commit, changed = board_preview.runs_changed_since(project, base) if base is not None else (None, [])
    dirs = [d.resolve() for d in run_dirs] or changed
    changes = board_preview.changes_since(project, commit) if commit is not None else None
    store = _choose_store(project, hub_repo, hub_endpoint, hub_revision)
    board = {"store": store} if commit is None or not isinstance(store, LocalStore) else {"base_commit": commit}
    result = board_preview.preview(
        project, dirs, **board, changes=changes, validate_all=not run_dirs, seed=seed, progress=progress
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(json_path, json.dumps(result.document, indent=1) + "\n")
    # Submitted text in it is inert: no control character survives.
    click.echo(board_preview.markdown(result.document), nl=False)
    if not result.ok:
        raise SystemExit(EXIT_INVALID)


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--benchmark", required=True, metavar="NAME", help="Benchmark name (folder under data/benchmarks/).")
@click.option("--title", default=None, help="Title shown on the site (default: from NAME).")
def init(directory: Path, benchmark: str, title: str | None):
    """Create a new leaderboard folder DIRECTORY for benchmark NAME.

    Writes mkdocs.yml, data/benchmarks/NAME/ (benchmark.yaml and two
    example questions), submissions/NAME/example-run/, the GitHub workflows
    and a README. The workflows and README install exactly the Dualboard
    that runs this command (dualboard==VERSION, see --version), so the
    leaderboard's CI grades with the code that made it. DIRECTORY must not
    exist or be empty.
    """
    from dualboard.scaffold import scaffold

    files = scaffold(directory, benchmark, title)
    click.echo(f"    init: {len(files)} files written to {directory}. Next: dualboard build --root {directory}")


@main.command()
@root_option
@store_option
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
@jobs_option
def grade(project: Project, store: Store, progress: bool, jobs: int | None):
    """Grade stored runs into build/scored/<benchmark>/, a Parquet file per run.

    scored/<run>.parquet holds both scores per question × round (what stats
    reads), answers/<run>.parquet the same rows with prompt, key answer and
    response, verdicts/<run>.parquet every grader's verdict; about.json
    records the store revision graded.

    Verdicts are cached by content in the store, so a second run grades
    nothing again (and a new run costs only its own answers):

    \b
      local store        .dualboard/store/verdicts/
      --hub [--stage]    .dualboard/hub-pending/verdicts/ until `dualboard publish` pushes them
                         (grading itself never writes to the Hub)

    New verdicts are saved every 5 s, so a grade that is killed keeps what
    it received and the next one asks an LLM judge only for the rest. How
    many requests an llm grader keeps in flight and how many it may start
    per minute are its options in benchmark.yaml (max_concurrency,
    requests_per_minute; README: "An LLM judge").

    Each run's tables are Parquet files of their own in
    build/scored/<benchmark>/, made under a hash of the run's files, the
    benchmark's questions and graders, the run's human labels and the
    grading code: a run already graded is not graded again, so adding one run
    grades and writes that run only. Runs to grade are spread over --jobs
    processes.
    """
    click.echo(str(pipeline.grade_stage(project, store, progress=progress, jobs=jobs)))


@main.command()
@root_option
@click.option("--seed", type=int, default=SEED, show_default=True, help="Seed of every bootstrap.")
@click.option(
    "--force", is_flag=True, help="Analyse from scratch: reuse no result kept in build/stats-pieces/, skip nothing."
)
def stats(project: Project, seed: int, force: bool):
    """Analyse build/scored/ into build/stats/<benchmark>/*.csv.

    What depends on one run alone (its models row, its agreement rows) or on
    two runs alone (their pairwise comparison) is kept by content in
    build/stats-pieces/: after a run is added, only that run and its pairs
    with the others are computed, and the tables are byte for byte those of
    an analysis from scratch (--force). Holm adjustments, ranks and pooled
    agreement depend on every run and are always recomputed.
    """
    click.echo(str(pipeline.stats(project, seed=seed, force=force)))


@main.command()
@root_option
@store_option
def render(project: Project, store: Store):
    """Write pages and charts from build/stats/ and build the site into site/.

    Refuses when build/scored or build/stats was made from another store
    revision than the current one (run `dualboard build`).
    """
    click.echo(str(pipeline.render(project, store)))


@main.command()
@root_option
@click.option("--port", type=int, default=8000, show_default=True, help="Port on 127.0.0.1.")
@click.option("--open/--no-open", "open_browser", default=False, help="Open the site in a browser.")
def serve(project: Project, port: int, open_browser: bool):
    """Preview the built site on http://127.0.0.1:PORT/ (Ctrl-C to stop)."""
    if not (project.site_dir / "index.html").is_file():
        raise click.ClickException(
            f"{project.site_dir} has no built site — run `dualboard build --root {project.root}` first"
        )
    from dualboard.render.serve import SiteServer

    _serve(
        lambda: SiteServer(project.site_dir, port),
        port,
        lambda server: f"Serving {project.site_dir} at {server.url} (Ctrl-C to stop)",
        open_browser,
        "Stopped.",
    )


def _serve(start, port: int, intro, open_browser: bool, stopped: str) -> None:
    """Start a loopback server (``start()``), print ``intro(server)``, open it if asked, and serve until Ctrl-C."""
    try:
        server = start()
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}) — pass another --port") from exc
    with server:
        click.echo(intro(server))
        if open_browser:
            webbrowser.open(server.url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo(stopped)


@main.command()
@root_option
@click.option(
    "--benchmark",
    default="demo",
    show_default=True,
    help="Benchmark whose data/benchmarks/<name>/simulated_models.yaml describes the models.",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed; the same seed writes the same bytes (default: the demo's, printed at the end).",
)
def simulate(project: Project, benchmark: str, seed: int | None):
    """Write simulated runs with known true accuracies into submissions/.

    Each model in simulated_models.yaml has a true accuracy per grading and
    category; the runs it writes look like real submissions (explanations,
    final-answer sentences, several answer styles, a few malformed answers).
    The statistics tests use the same simulator as ground truth.
    """
    from dualboard.simulation import DEMO_SEED, simulate_benchmark

    seed = DEMO_SEED if seed is None else seed
    paths = simulate_benchmark(project.root, benchmark, seed=seed)
    for path in paths:
        click.echo(f"wrote {path}")
    click.echo(f"{len(paths)} simulated runs for {benchmark} (seed {seed})")


@main.command()
@root_option
@click.argument("benchmark")
@click.option(
    "--labeller",
    required=True,
    help="Your name, which names your labels' file: lower-case letters, digits, '_' or '-'.",
)
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port on 127.0.0.1 (default: any free port).")
@click.option(
    "--overlap",
    type=click.FloatRange(0, 1),
    default=0.1,
    show_default=True,
    help="Share of answers you label again after another labeller, to measure people against people (your own "
    "setting decides what you are given).",
)
@click.option("--seed", type=int, default=SEED, show_default=True, help="Seed of the order answers are drawn in.")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True, help="Open the page in a browser.")
def label(project: Project, benchmark: str, labeller: str, port: int, overlap: float, seed: int, open_browser: bool):
    """Label answers in the browser, to measure how far each grader can be trusted against people.

    Serves a page on 127.0.0.1 that shows one answer at a time (the question,
    its key, the response as plain text) and takes Pass, Fail (keys p, f),
    a mark on 0–100 where the benchmark gives partial credit (m), Skip (s)
    and Undo (u). The graders' verdicts are
    shown only once you have chosen. Identical responses to a question are
    labelled once. Answers are drawn where graders disagree first, then at
    random within the graders' verdict cells, so that each grader's κ
    against people tightens fastest; the page shows it as you go.

    Each label is appended at once to
    data/benchmarks/BENCHMARK/human_labels/LABELLER.csv (one file per
    labeller, so labellers never conflict in a merge): stop at any time and
    run the command again to go on. Commit the file; the next
    `dualboard build` grades with it. Needs a build first (`dualboard build`):
    the page reads the graded answers in build/scored/.
    """
    from dualboard.labelling.server import LabelServer
    from dualboard.labelling.session import open_session

    session, cut = open_session(project.data_dir, project.scored_dir(), benchmark, labeller, seed=seed, overlap=overlap)
    if cut:
        click.echo(f"warning: cut an unfinished last line ({cut} bytes) off {session.path}: that label was lost")
    _serve(
        lambda: LabelServer(session, port),
        port,
        lambda server: (
            f"Labelling {benchmark} as {labeller}: labels go to {session.path}\n"
            f"Open {server.url} (the token in it is this session's; Ctrl-C to stop)"
        ),
        open_browser,
        "Stopped; every label given is in the file.",
    )


@main.command(name="label-digests")
@root_option
@click.argument("benchmark")
def label_digests(project: Project, benchmark: str):
    """Add response_sha256 to a human_labels.csv written before labels named their response.

    Each label gets the digest of the response its run holds now in
    submissions/BENCHMARK/, so from then on a label applies to that response
    only. Run it once, after checking that the labelled runs are those people
    labelled: a run replaced since would inherit their labels.
    """
    from dualboard.intake.human_labels import LABELS_FILE, add_digests

    path = project.data_dir / "benchmarks" / benchmark / LABELS_FILE
    if not is_name(benchmark) or not path.is_file():
        raise click.ClickException(f"{path} does not exist — name a benchmark with human labels")
    count = add_digests(path, project.submissions_dir / benchmark)
    click.echo(f"wrote {path}: {count} label(s) with the digest of the response each labels")


@main.group(name="import")
def import_():
    """Convert results published elsewhere into a leaderboard folder."""


@import_.command(name="autogenai")
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--benchmark", required=True, help="Name of the benchmark to create (folder under data/benchmarks/).")
@click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Leaderboard folder to write data/ and submissions/ into.",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing benchmark or run folder of the same name.")
def import_autogenai_command(src: Path, benchmark: str, dest: Path, overwrite: bool):
    """Import a release of "Easy Problems That LLMs Get Wrong" (autogenai).

    SRC is a release folder of the benchmark's GitHub repository,
    autogenai/easy-problems-that-llms-get-wrong, such as
    2024-09-13-Multi-Benchmark (multiple choice, 10 rounds, shuffled options)
    or 2024-04-28-Paper-Benchmark (open answers with partial-credit marks).
    The options' published order comes from linguistic_benchmark_multi_choice.json
    in that folder or the one above it, as the repository lays them out.
    Published scores travel as recorded scores; answer keys come from
    human_answer (and correct_answer for MC). The authors' own marks of open
    answers (llm_outputs/final_answers-*.json) become human_labels.csv and,
    where they cover every answer, the answer-key grading.

    \b
    Example:
      git clone https://github.com/autogenai/easy-problems-that-llms-get-wrong
      dualboard import autogenai easy-problems-that-llms-get-wrong/2024-09-13-Multi-Benchmark \\
          --benchmark easy-problems-mc --dest .
    """
    from dualboard.importers import import_autogenai

    summary = import_autogenai(src, benchmark=benchmark, dest=dest, overwrite=overwrite)
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    labels = f", {summary.n_human_labels} human labels" if summary.n_human_labels else ""
    click.echo(
        f"imported {summary.benchmark} {summary.version} ({summary.question_type}): {summary.n_questions} questions, "
        f"{len(summary.runs)} runs, {summary.n_predictions} answers{labels} into {dest}"
    )


dest_option = click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Leaderboard folder to write data/ and submissions/ into.",
)
submitter_option = click.option(
    "--submitter", required=True, help="Who ran the evaluation (your name or GitHub handle), written to metadata.yaml."
)
benchmark_name_option = click.option(
    "--benchmark",
    default=None,
    help="Name of the benchmark (folder under data/benchmarks/) when it is not the task's name; one task only.",
)
overwrite_option = click.option(
    "--overwrite", is_flag=True, help="Replace an existing run folder of the same name (a re-run of the model)."
)


@import_.command(name="inspect")
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@submitter_option
@benchmark_name_option
@dest_option
@overwrite_option
def import_inspect_command(logs: tuple[Path, ...], submitter: str, benchmark: str | None, dest: Path, overwrite: bool):
    """Import Inspect AI logs (.eval or .json) as runs: one per (model, task).

    Each sample and epoch becomes an answer (epochs are rounds); every scorer's
    value becomes a recorded score, and the first scorer is the traditional
    grading. Answer-key grading re-grades the completions against the targets.
    A task the leaderboard has no benchmark for also becomes
    data/benchmarks/<task>/ (questions, choices, targets as answer keys): that
    folder goes in a maintainer's pull request of its own; a submission's pull
    request adds only the run folder. Needs the [inspect] extra
    (pip install "dualboard[inspect]").

    \b
    Example:
      inspect eval my_task.py --model openai/gpt-4o --epochs 3 --log-dir logs
      dualboard import inspect logs/*.eval --submitter your-handle
      dualboard validate submissions/my_task
    """
    from dualboard.importers.inspect_log import read_inspect_logs

    _report_import(read_inspect_logs(list(logs)), dest, submitter, benchmark, overwrite)


@import_.command(name="lm-eval")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@submitter_option
@benchmark_name_option
@dest_option
@overwrite_option
def import_lm_eval_command(folder: Path, submitter: str, benchmark: str | None, dest: Path, overwrite: bool):
    """Import lm-evaluation-harness output (the --output_path of a --log_samples run) as runs.

    FOLDER holds results_<time>.json and samples_<task>_<time>.jsonl, for one
    model or several: each (model, task) becomes a run. The task's first metric
    (metric_list) is the traditional grading, every metric from 0 to 1 a
    recorded score. For multiple_choice tasks the response is the option that
    metric picks (its letter and text), and the log-likelihoods go to
    provenance.jsonl; for generate_until tasks the answer is the text lm-eval
    scored (its filter's, from the repeats), and every repeat is kept there.
    A task the leaderboard has no benchmark for also becomes
    data/benchmarks/<task>/: that folder goes in a maintainer's pull request
    of its own. Needs no extra: the files are JSON.

    \b
    Example:
      lm_eval --model hf --model_args pretrained=my-org/my-model --tasks my_task \\
          --output_path out --log_samples
      dualboard import lm-eval out --submitter your-handle
      dualboard validate submissions/my_task
    """
    from dualboard.importers.lm_eval_samples import read_lm_eval_output

    _report_import(read_lm_eval_output(folder), dest, submitter, benchmark, overwrite)


def _report_import(runs: list, dest: Path, submitter: str, benchmark: str | None, overwrite: bool) -> None:
    """Write the runs read from a harness's logs and say what was written, with the harness's own numbers."""
    from dualboard.importers.harness import import_harness_runs

    done = import_harness_runs(runs, dest=dest, submitter=submitter, benchmark=benchmark, overwrite=overwrite)
    for name in done.benchmarks:
        click.echo(
            f"wrote data/benchmarks/{name}/ (new benchmark: its questions and answer keys from the task's targets) — "
            "a maintainer adds it in a pull request of its own"
        )
    for name, run_id, run in done.runs:
        rounds = max(a.round for a in run.answers) + 1
        click.echo(
            f"wrote submissions/{name}/{run_id}/: {len(run.answers)} answers ({rounds} round(s)) of {run.model} on "
            f"task {run.task}; "
            f"{run.harness} reported {run.metric} {run.reported:.4g} (rounds reduced by {run.reducer})"
        )
    click.echo(f"next: dualboard validate --root {dest} and open a pull request with the run folder(s)")


@main.command()
@root_option
@store_option
@click.argument("version")
@click.option("--push", is_flag=True, help="Push the gh-pages branch to the remote after deploying.")
@click.option(
    "--date",
    "released",
    type=IsoDate(),
    default=_today,
    show_default="today in UTC",
    help="Release date written to the manifest and changelog.",
)
def release(project: Project, store: Store, version: str, push: bool, released: str):
    """Freeze the current build as VERSION and deploy it with mike.

    Writes releases/VERSION/: README.md (the dataset card), manifest.json,
    SHA256SUMS, scored/, answers/ (with the prompts and responses), verdicts/
    (Parquet and spreadsheet-safe CSV per benchmark, in parts under 100 MB
    when large) and stats/. Then renders the site with the changelog against
    the previous release and deploys it to the gh-pages branch as VERSION with
    the `latest` alias; the data files its pages load are stored once, in
    gh-pages/shared/ beside the versions. That version's Downloads page carries every release
    file up to 50 MB and links the larger ones: at the Hub dataset's tag
    VERSION when the store is a Hub dataset (pass the same --hub options as
    the build; `dualboard publish --release VERSION` uploads the folder
    there), else they are to be attached to the code host's release from
    releases/VERSION/. Run `dualboard build` first: a build made from another
    store revision than the current one is refused.

    \b
      dualboard build && dualboard release 2026.1
      dualboard build --hub ORG/NAME --stage && dualboard release 2026.1 --hub ORG/NAME --stage
    """
    result = pipeline.release(project, store, version, released=released, push=push)
    click.echo(
        f"release {result.version}: {result.files} files in {result.folder}; site deployed to gh-pages"
        + (" and pushed" if result.pushed else " (not pushed; use --push)")
    )
