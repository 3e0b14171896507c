"""Release: freeze the current build as a citable version, and publish it.

``dualboard release VERSION`` (:func:`dualboard.pipeline.release`) writes
``releases/VERSION/`` with :mod:`dualboard.release.freeze` (scored answers and
verdicts as Parquet and CSV, statistics, a manifest, SHA-256 checksums and a
dataset card), renders the site with the new changelog and deploys it as a
mike version through the render stage (:func:`dualboard.render.site.deploy_site`;
this package knows nothing of MkDocs). What lies where in a release folder,
and how to read past releases, is :mod:`dualboard.release_files`, which the
render stage reads too. ``dualboard publish`` (:mod:`dualboard.release.publish`)
uploads a frozen folder to the Hub.
"""
