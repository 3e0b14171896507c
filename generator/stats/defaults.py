"""The published defaults and limits of the statistics, importable without them (the CLI shows them in ``--help``;
the tables' notes and the render's worker processes read them without loading scipy)."""

SEED = 20241129
"""Default seed of every bootstrap and of the calibration bench; published in notes.json."""
N_BOOT = 2000
"""Default number B of bootstrap resamples of questions (rank intervals, κ); published in notes.json."""
TOO_FEW_QUESTIONS = 10
"""Under this many questions a comparison runs only exact tests, and a run gets no rank interval."""
