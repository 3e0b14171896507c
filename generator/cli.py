"""The ``dualboard`` command line: thin commands over the pipeline stages.

Each command parses its arguments, calls one library function and reports
the result. Library errors (DualboardError) become messages, never tracebacks.
"""

from __future__ import annotations

import datetime as dt
import functools
import http.server
import socketserver
import time
import webbrowser
from pathlib import Path

import click

from generator import __version__, pipeline
from generator.errors import DualboardError, InvalidInputError
from generator.project import Project
from generator.release.freeze import release as freeze_release
from generator.simulation import simulate_benchmark
from generator.store import LocalStore

EXIT_INVALID = 1


def root_option(command):
    """Add ``--root DIR`` (the leaderboard folder) and pass a Project."""

    @click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
                  show_default=True, help="Leaderboard folder holding data/ and submissions/.")
    @functools.wraps(command)
    def wrapper(root: Path, **kwargs):
        return command(project=Project(root.resolve()), **kwargs)

    return wrapper


def _store(project: Project) -> LocalStore:
    return LocalStore(project.store_dir)


def _run(step):
    """Run one stage; turn library errors into click errors (exit 1, message only)."""
    try:
        return step()
    except InvalidInputError as exc:
        raise click.ClickException(str(exc)) from exc
    except DualboardError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option("--seed", type=int, default=20241129, show_default=True, help="Seed of every bootstrap, published on the site.")
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
def build(project: Project, seed: int, progress: bool):
    """Run every stage: validate → ingest → grade → stats → render.

    The site is written to site/ (the previous one stays until the new one is
    complete). Same inputs and seed give the same scored data and site.
    """
    started = time.perf_counter()
    store = _store(project)
    click.echo(str(_run(lambda: pipeline.validate(project))))
    click.echo(str(_run(lambda: pipeline.ingest(project, store)[0])))
    click.echo(str(_run(lambda: pipeline.grade(project, store, progress=progress))))
    click.echo(str(_run(lambda: pipeline.stats(project, seed=seed))))
    click.echo(str(_run(lambda: pipeline.render(project, store))))
    click.echo(f"Built in {time.perf_counter() - started:.1f} s. Preview with: dualboard serve --root {project.root}")


@main.command()
@root_option
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
def validate(project: Project, paths: tuple[Path, ...]):
    """Check submissions without changing anything.

    PATHS are run folders, benchmark folders under submissions/, or the
    submissions folder itself (the default). Every problem is listed as
    file:line: field: problem — fix. Exit code 0 when valid, 1 when not.
    """
    click.echo(str(_run(lambda: pipeline.validate(project, list(paths) or None))))


@main.command()
@root_option
def ingest(project: Project):
    """Validate submissions and add them to the store atomically.

    Nothing is written unless every run is valid.
    """
    click.echo(str(_run(lambda: pipeline.ingest(project, _store(project))[0])))


@main.command()
@root_option
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
def grade(project: Project, progress: bool):
    """Grade stored runs into build/scored/<benchmark>.parquet.

    Verdicts are cached by content in the store: a second run grades nothing again.
    """
    click.echo(str(_run(lambda: pipeline.grade(project, _store(project), progress=progress))))


@main.command()
@root_option
@click.option("--seed", type=int, default=20241129, show_default=True, help="Seed of every bootstrap.")
def stats(project: Project, seed: int):
    """Analyse build/scored/ into build/stats/<benchmark>/*.csv."""
    click.echo(str(_run(lambda: pipeline.stats(project, seed=seed))))


@main.command()
@root_option
def render(project: Project):
    """Write pages and charts from build/stats/ and build the site into site/."""
    click.echo(str(_run(lambda: pipeline.render(project, _store(project)))))


@main.command()
@root_option
@click.option("--port", type=int, default=8000, show_default=True, help="Port on 127.0.0.1.")
@click.option("--open/--no-open", "open_browser", default=False, help="Open the site in a browser.")
def serve(project: Project, port: int, open_browser: bool):
    """Preview the built site on http://127.0.0.1:PORT/ (Ctrl-C to stop)."""
    if not (project.site_dir / "index.html").is_file():
        raise click.ClickException(f"{project.site_dir} has no built site — run `dualboard build --root {project.root}` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(project.site_dir))
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    try:
        server = socketserver.ThreadingTCPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}) — pass another --port") from exc
    with server:
        url = f"http://127.0.0.1:{port}/"
        click.echo(f"Serving {project.site_dir} at {url} (Ctrl-C to stop)")
        if open_browser:
            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("Stopped.")


@main.command()
@root_option
@click.option("--benchmark", default="demo", show_default=True,
              help="Benchmark whose data/benchmarks/<name>/simulated_models.yaml describes the models.")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed; the same seed writes the same bytes.")
def simulate(project: Project, benchmark: str, seed: int):
    """Write simulated runs with known true accuracies into submissions/.

    Each model in simulated_models.yaml has a true accuracy per grading and
    category; the runs it writes look like real submissions (explanations,
    final-answer sentences, several answer styles, a few malformed answers).
    The statistics tests use the same simulator as ground truth.
    """
    paths = _run(lambda: simulate_benchmark(project.root, benchmark, seed=seed))
    for path in paths:
        click.echo(f"wrote {path}")
    click.echo(f"{len(paths)} simulated runs for {benchmark} (seed {seed})")


@main.command()
@root_option
@click.argument("version")
@click.option("--push", is_flag=True, help="Push the gh-pages branch to the remote after deploying.")
@click.option("--date", "released", default=lambda: dt.date.today().isoformat(), show_default="today",
              help="Release date written to the manifest and changelog (YYYY-MM-DD).")
def release(project: Project, version: str, push: bool, released: str):
    """Freeze the current build as VERSION and deploy it with mike.

    Writes releases/VERSION/ (scored answers as Parquet and CSV, verdicts,
    statistics, manifest.json, a dataset card and SHA256SUMS), renders the
    site with the changelog against the previous release, and deploys it to
    the gh-pages branch as VERSION with the `latest` alias. Run
    `dualboard build` first.
    """
    result = _run(lambda: freeze_release(project, _store(project), version, released=released, push=push))
    click.echo(f"release {result.version}: {result.files} files in {result.folder}; site deployed to gh-pages"
               + (" and pushed" if result.pushed else " (not pushed; use --push)"))
