"""Intake: the contracts of submitted files, their validation, and importers."""
