"""Seeded simulation of benchmark runs with known truth.

The numeric core (:mod:`generator.simulation.outcomes`) draws per-question
pass probabilities and per-round outcomes under both gradings; the statistics
tests and ``bench/calibration.py`` use it as ground truth.
"""
