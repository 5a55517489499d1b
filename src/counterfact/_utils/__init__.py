"""Helpers every layer may use: parameter validation, optional imports, progress
bars and value conversions.  Nothing here imports any other part of the package."""
