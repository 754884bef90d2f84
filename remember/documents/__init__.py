"""The notes a document yields: its articles and clauses read whole, contract terms filed as
contract terms with their document, article and page (docs/documents.md). The document itself —
files, pages, chunks, the worker's job — is the ``documents`` app's."""
from remember.documents.notes import remember_document

__all__ = ["remember_document"]
