"""Use cases and queries: they take a Session and return data; no web framework imports."""
