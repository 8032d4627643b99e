"""Extraction: transcript importers, session notes, and the extractors that turn turns into memories."""
