"""Pydantic I/O models."""
