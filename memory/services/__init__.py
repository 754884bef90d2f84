"""Writes to memory. Every function here runs in a transaction and leaves an audit entry."""
