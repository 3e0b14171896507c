"""Importers: turn results published elsewhere into Dualboard benchmarks and runs."""

from dualboard.importers.autogenai import ImportSummary, import_autogenai

__all__ = ["ImportSummary", "import_autogenai"]
