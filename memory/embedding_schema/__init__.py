"""The database side of changing the embedding model (docs/operations.md, "Changing the
embedding model"): which tables hold vectors and the text each is made from (``tables``), the
shadow columns, trigger and indexes and their switch (``shadow``, DDL only), and encoding rows
into the shadow columns in resumable batches (``encoding``). The run's steps, audited, are the
service ``memory.services.reembed``."""
