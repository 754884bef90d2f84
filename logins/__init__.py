"""Login throttling (django-axes): lock-outs recorded in the audit log and shown to firm admins.

See docs/production.md "Login throttling".
"""
