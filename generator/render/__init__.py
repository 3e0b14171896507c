"""Render: stats tables and scored data → Markdown pages, chart JSON, and the built site.

Everything that knows about MkDocs lives in :mod:`dualboard.render.site` (with
``site_config``, the settings a leaderboard may change): composing the docs,
``mkdocs build``, and the mike deploy the release stage asks for. Moving to
another static-site engine is that module's work. :mod:`dualboard.render.gh_pages`
keeps the content-addressed data files once on the ``gh-pages`` branch, beside the
versions mike writes (plain git, no MkDocs). Past releases, for the
Downloads and Changelog pages, are read through :mod:`dualboard.release_files`;
nothing here imports the release stage.
"""
