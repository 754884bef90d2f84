"""Django admin for auditors.

Superusers (the platform's operators) see every firm. A firm admin with staff status sees
only what the one visibility rule (``visible_to``) gives them, restricted to the firms they
administer — so the ethical wall holds in admin too — and anything else is a 404. Every edit
or delete goes through ``memory.services`` and is itself audited.

One module per group of models, each registering its own: ``base`` (the wall, the site's
name), ``notes`` (notes and links), ``audit`` (the audit log), ``conversations`` (raw
conversations and messages), ``pipeline`` (the write path's jobs, consolidations and persona
traits), ``llm_servers`` (the installation's LLM servers). Django's admin autodiscovery imports
this package, which imports them all.
"""
from memory.admin import base, notes, audit, conversations, pipeline, llm_servers  # noqa: F401
