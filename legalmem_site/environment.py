"""Typed readers for environment variables.

Every setting of LegalMem comes from the environment (see README "Configuration").
A missing or malformed value raises :class:`ConfigError` whose message is one line
naming the variable, so an operator knows exactly what to fix.
"""
from __future__ import annotations

import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured


class ConfigError(ImproperlyConfigured):
    """A setting read from the environment is missing or malformed."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None, *, required_because: str = "") -> str:
    """Return the variable, or ``default``; without a default it is required."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        if default is None:
            hint = f" ({required_because})" if required_because else ""
            raise ConfigError(f"{name} is not set{hint}")
        return default
    return value.strip()


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default).lower()
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def env_url(name: str, *, schemes: tuple[str, ...], required_because: str = "") -> str:
    """A URL whose scheme is one of ``schemes``; optional unless ``required_because``."""
    value = env_str(name, None if required_because else "", required_because=required_because)
    if value == "":
        return ""
    parsed = urlparse(value)
    if parsed.scheme not in schemes:
        raise ConfigError(
            f"{name} must be a {'/'.join(s + '://' for s in schemes)} URL, got {value!r}"
        )
    if not parsed.netloc and "host=" not in parsed.query:
        raise ConfigError(f"{name} has no host: {value!r}")
    return value


def env_header(name: str) -> tuple[str, str] | None:
    """An HTTP header and its value, ``"X-Forwarded-Proto: https"``, as Django's META key pair
    ``("HTTP_X_FORWARDED_PROTO", "https")``; unset is None."""
    raw = env_str(name, "")
    if raw == "":
        return None
    header, sep, value = raw.partition(":")
    header, value = header.strip(), value.strip()
    if not sep or not header or not value or not all(c.isalnum() or c == "-" for c in header):
        raise ConfigError(f"{name} must look like 'X-Forwarded-Proto: https', got {raw!r}")
    return "HTTP_" + header.upper().replace("-", "_"), value
