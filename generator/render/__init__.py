"""Render: stats tables and scored data → Markdown pages, chart JSON, and the built site.

Everything that knows about MkDocs lives in :mod:`dualboard.render.site`, so
moving to another static-site engine is one module's work.
"""
