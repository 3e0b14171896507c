__version__ = "0.1.0"
"""The one place the version is written: pyproject.toml reads it from here (``[tool.setuptools.dynamic]``)."""

REQUIREMENT = f"dualboard=={__version__}"
"""The pip requirement for exactly this Dualboard. A leaderboard that ``dualboard init`` scaffolds
installs it everywhere (workflows, README), and the How to submit page tells submitters to install
it, so a run is checked locally by the same code that grades it in CI."""
