"""The published defaults of the statistics, importable without them (the CLI shows them in ``--help``)."""

SEED = 20241129
"""Default seed of every bootstrap and of the calibration bench; published in notes.json."""
N_BOOT = 2000
"""Default number B of bootstrap resamples of questions (rank intervals, κ); published in notes.json."""
