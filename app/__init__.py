"""tierline: which AI hardware build runs this model, how fast, and at what cost."""

# The one version string: pyproject reads it (dynamic version) and the app reports it.
__version__ = "1.1.0"
