"""Release: freeze the current build as a citable version.

``dualboard release VERSION`` writes ``releases/VERSION/`` (scored answers as
Parquet and CSV, verdicts, statistics, a manifest, SHA-256 checksums and a
dataset card), renders the site with the new changelog and deploys it as a
mike version. :mod:`generator.release.history` reads past releases for the
changelog and downloads pages.
"""
