"""What every app uses and nothing of LegalMem's own: metrics, structured logs, advisory locks,
HTTP input limits, text hygiene, the LLM client, the embedders, token estimates and whether a
worker holding a job is still alive.

The bottom layer (tests/site/test_import_graph.py): nothing here imports a LegalMem app. Where a
piece needs the database's knowledge (the LLM client's remembered JSON modes and speeds, the
metric collectors that count rows, the firms named on a request's log line), infra declares a
small registry and the app that owns the models fills it from its ``AppConfig.ready()``.
"""
