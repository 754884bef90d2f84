"""The one reader of legal text: ``read(text, language, said_at) -> Reading``.

Pure Python (the standard library and ``re``): no models, no database, no network. It sits
below every other package (tests/site/test_import_graph.py); the write path, routing, recall
and documents ask a ``Reading`` (or the named pieces below) instead of parsing on their own.
"""
from .language import detect_language
from .reading import Reading, read

__all__ = ["Reading", "detect_language", "read"]
