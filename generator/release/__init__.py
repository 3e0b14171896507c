"""Release: freeze the current build as a citable version.

``dualboard release VERSION`` writes ``releases/VERSION/`` (scored answers and
verdicts as Parquet and CSV, statistics, a manifest, SHA-256 checksums and a
dataset card; :mod:`dualboard.release.layout` says what lies where and which
files travel with the site), renders the site with the new changelog and
deploys it as a mike version. :mod:`dualboard.release.history` reads past
releases for the changelog and downloads pages; ``dualboard publish``
(:mod:`dualboard.store.publish`) uploads a frozen folder to the Hub.
"""
