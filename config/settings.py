"""Userbench settings.

Every difference between a laptop and production is an environment variable;
nothing exists only in production. See README, "Deployment".
"""

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _
from dotenv import dotenv_values

BASE_DIR = Path(__file__).resolve().parent.parent


TRUE_WORDS = {"1", "true", "yes", "on"}


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in TRUE_WORDS


def local_env(path: str) -> dict[str, str]:
    """The variables of a local development file (`make run` writes `.env` once), or nothing.

    The file only ever serves development: it is read when it, or the real environment, turns
    DEBUG on, and the real environment wins for every variable. A process with DEBUG off reads
    its real environment alone, so production never takes its SECRET_KEY from a file left on disk.
    """
    if not path or not os.path.isfile(path):
        return {}
    values = {name: value for name, value in dotenv_values(path).items() if value is not None}
    debug = os.environ.get("DEBUG", values.get("DEBUG", ""))
    return values if debug.strip().lower() in TRUE_WORDS else {}


# USERBENCH_ENV_FILE names another file; empty reads none (the test settings do that).
for _name, _value in local_env(os.environ.get("USERBENCH_ENV_FILE", str(BASE_DIR / ".env"))).items():
    os.environ.setdefault(_name, _value)


def env_list(name: str, default: str = "") -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


DEBUG = env_bool("DEBUG", False)
# Demo mode seeds well-known accounts; it must never be on in production.
DEMO_MODE = env_bool("USERBENCH_DEMO", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off. For development, `make run` writes a .env "
            "with DEBUG=1 and a key of its own once; a deployment sets SECRET_KEY in its environment."
        )
    SECRET_KEY = "insecure-development-key-only-for-debug"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# A form sent with a missing or stale token gets a page that says what to do, in the reader's language.
CSRF_FAILURE_VIEW = "core.views.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # Log-in lockout after repeated failures (by user name; addresses are never stored).
    "axes",
    # Apps depend one way, as the data flows: curation -> judging -> annotation, all on
    # core and llm; home (cross-app pages and commands) sits on top of them all.
    "core",
    "llm",
    "curation",
    "judging",
    "annotation",
    "home",
    # After llm: llm's `db_worker` (the same worker, with the LLM client loaded as it starts)
    # is the one `manage.py db_worker` runs.
    "django_tasks_db",
]

MIDDLEWARE = [
    # First: a body larger than its route's limit is refused from its length, before anything
    # reads it (core/body_limits.py).
    "core.body_limits.BodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # The workspace a person works in on pages: chosen with the header's switcher.
    "core.middleware.CurrentWorkspaceMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # NUL and control characters, and over-deep JSON, are refused here for every view and API.
    "core.middleware.InputCheckMiddleware",
    # Last, as django-axes asks: it turns a locked-out log-in into its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.roles",
                "core.context_processors.workspaces",
                "core.context_processors.kept_form",
            ],
        },
    },
]

# SQLite by default; PostgreSQL (or anything dj-database-url knows) through DATABASE_URL.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server and the worker read while the other writes; IMMEDIATE
    # takes the write lock at BEGIN so concurrent writers wait instead of failing.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": (
            "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=20000;PRAGMA foreign_keys=ON;"
        ),
    }

elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A database that cannot be reached must fail a request, not hold it until gunicorn kills the
    # worker: a connection attempt gives up after DB_CONNECT_TIMEOUT seconds, and a connection
    # whose packets stop being acknowledged (a network partition: silence, not a reset) is closed
    # after DB_NETWORK_TIMEOUT seconds (TCP_USER_TIMEOUT; keepalives find an idle one). The
    # request then answers 503 (core/views.py, server_error).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "connect_timeout": int(os.environ.get("DB_CONNECT_TIMEOUT", "5")),
            "tcp_user_timeout": int(float(os.environ.get("DB_NETWORK_TIMEOUT", "10")) * 1000),
            "keepalives": 1,
            "keepalives_idle": 10,
            "keepalives_interval": 5,
            "keepalives_count": 3,
        }
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool("DB_PREPARED_STATEMENTS", True):
    # Parameters sent apart from the SQL, and a statement prepared once a connection has run
    # it 5 times: the annotation requests repeat the same few statements, and PostgreSQL then
    # plans each once per connection instead of once per request. Turn it off behind a pooler
    # in transaction mode that cannot keep prepared statements (DB_PREPARED_STATEMENTS=0).
    DATABASES["default"].setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first (it refuses locked-out accounts before any password is checked), then
# Django's model backend, reading a session's user and their roles in one query.
AUTHENTICATION_BACKENDS = ["core.auth.LoginLockoutBackend", "core.auth.RoleLoadingBackend"]

# Log-in lockout (django-axes): after LOGIN_FAILURE_LIMIT failed log-ins for one user name from
# one client, that name is locked for that client for LOGIN_LOCKOUT_MINUTES; a success resets the
# count. Someone else's wrong passwords never lock the owner out from their own address. A looser
# limit per client over every name (LOGIN_ADDRESS_FAILURE_LIMIT in the same minutes, counted in
# the shared cache) stops one client guessing across accounts (core.auth.LoginLockoutBackend).
# Axes keeps the client as a keyed hash written as a documentation-range IPv6 address
# (core.throttling.pseudonymous_address), never the real address.
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("LOGIN_LOCKOUT_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
LOGIN_ADDRESS_FAILURE_LIMIT = int(os.environ.get("LOGIN_ADDRESS_FAILURE_LIMIT", "30"))
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "core.throttling.pseudonymous_address"
AXES_DISABLE_ACCESS_LOG = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

# Argon2 (argon2-cffi, Django's own hasher with its defaults: 2 passes over 100 MiB, 8 lanes)
# first: memory-hard, so a guessing rig gains little from GPUs, and about a quarter of the
# server time of Django's PBKDF2 default (1,500,000 iterations, about a second a log-in on the
# 2-core development machine; bench/bench_login.py measures both). Passwords hashed earlier
# with PBKDF2 still verify and are rehashed with Argon2 at their next log-in.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Curation review queues: how long a reviewer keeps an item before it returns to the queue,
# and the models that draft references and translate (ChineseAlpacaEval 2.1-2.2): empty, the
# endpoint's own default model (OPENAI_MODEL, or a named endpoint's), unless the form names one.
CURATION_LEASE_SECONDS = int(os.environ.get("CURATION_LEASE_SECONDS", "1800"))
CURATION_REFERENCE_MODEL = os.environ.get("CURATION_REFERENCE_MODEL", "")
CURATION_TRANSLATION_MODEL = os.environ.get("CURATION_TRANSLATION_MODEL", "")

# Days an archived dataset, run, campaign or study can be restored; `purge_archived` deletes it after.
ARCHIVE_DAYS = int(os.environ.get("ARCHIVE_DAYS", "30"))

# Background work: django.tasks with the database backend. `judging` holds the
# long LLM shards so they never starve the short `default` jobs of a second worker.
TASKS = {
    "default": {
        "BACKEND": os.environ.get("TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default", "judging"],
    }
}

# Environment variables an endpoint may read its API key from, besides any name ending in
# _API_KEY (llm/secrets.py). SECRET_KEY and DATABASE_URL are never allowed.
LLM_KEY_VARIABLES = env_list("LLM_KEY_VARIABLES")

# The hosts each key variable may be sent to (llm/egress.py): an endpoint whose base URL is not
# among its key's hosts is refused when saved and when it calls. An entry is a host name or
# host:port. The environment variable LLM_KEY_HOSTS (JSON, e.g. {"VLLM_API_KEY": ["vllm.lab:8000"]})
# adds entries or replaces a variable's; [] binds a variable to no host. OPENAI_API_KEY is also
# bound to the host of OPENAI_BASE_URL, and a variable not listed may be sent there only.
DEFAULT_LLM_KEY_HOSTS = {
    "OPENAI_API_KEY": ["api.openai.com"],
    "ANTHROPIC_API_KEY": ["api.anthropic.com"],
    "DEEPSEEK_API_KEY": ["api.deepseek.com"],
    "GEMINI_API_KEY": ["generativelanguage.googleapis.com"],
    "MISTRAL_API_KEY": ["api.mistral.ai"],
    "GROQ_API_KEY": ["api.groq.com"],
    "TOGETHER_API_KEY": ["api.together.xyz"],
    "OPENROUTER_API_KEY": ["openrouter.ai"],
    "FIREWORKS_API_KEY": ["api.fireworks.ai"],
    "XAI_API_KEY": ["api.x.ai"],
    "DASHSCOPE_API_KEY": ["dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"],
    "MOONSHOT_API_KEY": ["api.moonshot.cn"],
}


def env_key_hosts(name: str) -> dict[str, list[str]]:
    """DEFAULT_LLM_KEY_HOSTS with the JSON object in the environment variable `name` over it."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return dict(DEFAULT_LLM_KEY_HOSTS)
    try:
        given = json.loads(raw)
    except ValueError as error:
        raise ImproperlyConfigured(f"{name} is not JSON: {error}") from error
    if not isinstance(given, dict) or not all(
        isinstance(hosts, list) and all(isinstance(host, str) for host in hosts) for hosts in given.values()
    ):
        raise ImproperlyConfigured(
            f'{name} maps variable names to lists of hosts, e.g. {{"X_API_KEY": ["x.example"]}}.'
        )
    return {**DEFAULT_LLM_KEY_HOSTS, **given}


LLM_KEY_HOSTS = env_key_hosts("LLM_KEY_HOSTS")

# Internal addresses endpoints may reach (llm/egress.py): host names, addresses or networks,
# comma-separated, e.g. "127.0.0.0/8,::1,localhost" for a local llama.cpp or Ollama (the
# development .env written by `make run` allows loopback). Empty: none; every other loopback,
# private, link-local, multicast, reserved or unique-local address is refused. The default
# endpoint (OPENAI_BASE_URL) is allowed as it is.
LLM_ALLOWED_INTERNAL_HOSTS = env_list("LLM_ALLOWED_INTERNAL_HOSTS")
# The function endpoints' host names are resolved with (socket.getaddrinfo's signature).
LLM_RESOLVER = "socket.getaddrinfo"

# Judge runs (judging/engine/execution.py, llm/retry.py): a running shard beats every
# HEARTBEAT seconds; one silent for STALE seconds was left by a crash and `judge_resume`
# takes it. Retries back off exponentially from RETRY_BASE up to RETRY_CAP, with jitter.
JUDGING_HEARTBEAT_SECONDS = float(os.environ.get("JUDGING_HEARTBEAT_SECONDS", "5"))
JUDGING_STALE_SECONDS = float(os.environ.get("JUDGING_STALE_SECONDS", "30"))
JUDGING_RETRY_BASE_SECONDS = float(os.environ.get("JUDGING_RETRY_BASE_SECONDS", "0.5"))
JUDGING_RETRY_CAP_SECONDS = float(os.environ.get("JUDGING_RETRY_CAP_SECONDS", "30"))
# How often a worker holding a run notices a cancel, a stop and the other workers sharing the
# run's concurrency (one cheap read); heartbeats are written every HEARTBEAT seconds.
JUDGING_TICK_SECONDS = float(os.environ.get("JUDGING_TICK_SECONDS", "0.5"))
# A worker whose ticks have not come back for HOLD seconds (its database is out of reach) starts
# no new call until one does: by the time another worker takes its shards over (STALE seconds),
# it has long stopped paying for calls whose replies it could not save. Used as at most STALE / 3.
JUDGING_HOLD_SECONDS = float(os.environ.get("JUDGING_HOLD_SECONDS", "5"))

# LLM calls (llm/stream.py, llm/config.py). Every call has a max_tokens: the run's or command's, else the
# endpoint's, else the default of its kind. `auto` concurrency (endpoints that state no limit)
# grows the window up to LLM_AUTO_MAX_IN_FLIGHT while the server keeps up.
LLM_MAX_TOKENS = {
    "judging": int(os.environ.get("LLM_MAX_TOKENS_JUDGING", "1024")),
    "generation": int(os.environ.get("LLM_MAX_TOKENS_GENERATION", "2048")),
    "reference": int(os.environ.get("LLM_MAX_TOKENS_REFERENCE", "2048")),
    "translation": int(os.environ.get("LLM_MAX_TOKENS_TRANSLATION", "2048")),
}
LLM_AUTO_MAX_IN_FLIGHT = int(os.environ.get("LLM_AUTO_MAX_IN_FLIGHT", "64"))
# An endpoint that states no timeout gives each call long enough to write the reply it asked
# for at this pace (a small model on a CPU writes 5-20 tokens a second), and never less than
# LLM_MIN_CALL_SECONDS: 2,048 tokens get 410 s, a 1,024-token judgment 205 s (llm.config.call_deadline).
LLM_SLOWEST_TOKENS_PER_SECOND = float(os.environ.get("LLM_SLOWEST_TOKENS_PER_SECOND", "5"))
LLM_MIN_CALL_SECONDS = float(os.environ.get("LLM_MIN_CALL_SECONDS", "120"))
# An endpoint's limits are one budget in the database for every worker and run (llm/budget.py):
# the provider's minute for requests and tokens per minute, and how long a worker's lease of
# calls in flight lasts unless renewed (a killed worker's slots come back after it).
LLM_RATE_WINDOW_SECONDS = float(os.environ.get("LLM_RATE_WINDOW_SECONDS", "60"))
LLM_BUDGET_LEASE_SECONDS = float(os.environ.get("LLM_BUDGET_LEASE_SECONDS", "30"))
# Providers quantise their limits (a minute's 60,000 requests enforced as 1,000 a second): over
# any window of LLM_BURST_SECONDS or more, workers send at most that window's share of the
# minute's requests and tokens (llm/pacing.py, a token bucket in the budget's row).
LLM_BURST_SECONDS = float(os.environ.get("LLM_BURST_SECONDS", "1"))
# A reply's body is read up to LLM_MAX_REPLY_BYTES once decompressed, and its text kept up to
# LLM_REPLY_CHARS_PER_TOKEN per token asked (LLM_MAX_REPLY_CHARS when none is asked): past
# either it is an error with its size, never stored.
LLM_MAX_REPLY_BYTES = int(os.environ.get("LLM_MAX_REPLY_BYTES", str(8 * 1024 * 1024)))
LLM_REPLY_CHARS_PER_TOKEN = int(os.environ.get("LLM_REPLY_CHARS_PER_TOKEN", "32"))
LLM_MAX_REPLY_CHARS = int(os.environ.get("LLM_MAX_REPLY_CHARS", "400000"))
# Batch runs (llm/batch.py, judging/batching.py): a batch holds at most MAX_REQUESTS lines and
# MAX_BYTES of file (OpenAI's limits: 50,000 requests, 200 MB); a batch still at the provider is
# looked at every POLL_SECONDS; files travel within TRANSFER_SECONDS; a results file is read up
# to MAX_RESULT_BYTES once inflated and for at most READ_SECONDS (past either, or cut short, its
# requests fail once and the file is never read again).
LLM_BATCH_MAX_REQUESTS = int(os.environ.get("LLM_BATCH_MAX_REQUESTS", "50000"))
LLM_BATCH_MAX_BYTES = int(os.environ.get("LLM_BATCH_MAX_BYTES", str(200 * 1000 * 1000)))
LLM_BATCH_POLL_SECONDS = float(os.environ.get("LLM_BATCH_POLL_SECONDS", "30"))
LLM_BATCH_TRANSFER_SECONDS = float(os.environ.get("LLM_BATCH_TRANSFER_SECONDS", "600"))
LLM_BATCH_MAX_RESULT_BYTES = int(os.environ.get("LLM_BATCH_MAX_RESULT_BYTES", str(2 * 1024**3)))
LLM_BATCH_READ_SECONDS = float(os.environ.get("LLM_BATCH_READ_SECONDS", "300"))

# Stored figures (BT, bootstrap, agreement, leaderboards) are recomputed by a background task
# at most once per FIGURES_DEBOUNCE_SECONDS after their votes or judgments change.
FIGURES_DEBOUNCE_SECONDS = float(os.environ.get("FIGURES_DEBOUNCE_SECONDS", "5"))

# Rate limits (core/throttling.py), per signed-in account or per client (a keyed hash of the
# address, never the address). "N/s|min|hour|day".
THROTTLE_RATES = {
    # The API: requests without credentials, and per account.
    "api_anon": os.environ.get("API_THROTTLE_ANON", "60/min"),
    "api_user": os.environ.get("API_THROTTLE_USER", "3000/min"),
    # Failed token authentications per client: past it, every token is refused until the hour ends.
    "api_token_failure": os.environ.get("API_THROTTLE_TOKEN_FAILURES", "20/hour"),
    # The study questionnaire: new submissions (consents), every other write, resume links.
    "study_start": os.environ.get("STUDY_THROTTLE_START", "20/hour"),
    "study_write": os.environ.get("STUDY_THROTTLE_WRITE", "120/min"),
    "study_resume": os.environ.get("STUDY_THROTTLE_RESUME", "30/min"),
}
# The largest request body a questionnaire page takes. A case is at most 20,000 characters, but an
# over-long paste must still arrive, so the page can say it is too long and show it again
# (20,000 Chinese characters are 180 kB as a form sends them).
STUDY_MAX_REQUEST_BYTES = int(os.environ.get("STUDY_MAX_REQUEST_BYTES", str(1024 * 1024)))
# Request bodies (core/body_limits.py): REQUEST_MAX_BYTES for every route (staff forms: a reviewed
# conversation of 20,000 Chinese characters is about 180 kB as a form sends it), the questionnaire
# its own, and a route added to REQUEST_BODY_LIMITS with UPLOAD_MAX_REQUEST_BYTES for file imports.
# A larger body is refused (413) from its Content-Length, before it is read.
REQUEST_MAX_BYTES = int(os.environ.get("REQUEST_MAX_BYTES", str(2 * 1024 * 1024)))
UPLOAD_MAX_REQUEST_BYTES = int(os.environ.get("UPLOAD_MAX_REQUEST_BYTES", str(50 * 1024 * 1024)))
# An answers or dataset file larger than this is stored in the database and read by a worker (the
# `default` queue, core/uploads.py), with its progress on the page: no web worker reads a large file
# inside its request.
UPLOAD_BACKGROUND_BYTES = int(os.environ.get("UPLOAD_BACKGROUND_BYTES", str(2 * 1024 * 1024)))
REQUEST_BODY_LIMITS = {
    "/study/": "STUDY_MAX_REQUEST_BYTES",
    # A dataset's candidate answers, uploaded as a file on its answers page or through the API.
    "/datasets/": "UPLOAD_MAX_REQUEST_BYTES",
    # ...and a public dataset file imported through the API (`POST /api/datasets/`).
    "/api/datasets/": "UPLOAD_MAX_REQUEST_BYTES",
    # A public dataset file, imported on its page.
    "/review/datasets/import/": "UPLOAD_MAX_REQUEST_BYTES",
}
# Django's own limits behind it: form fields never beyond the largest route limit, and file parts
# of a body within REQUEST_MAX_BYTES kept in memory, never written to a temporary file.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(REQUEST_MAX_BYTES, STUDY_MAX_REQUEST_BYTES, UPLOAD_MAX_REQUEST_BYTES)
FILE_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BYTES
# An unfinished submission with no activity for this many days is erased by `expire_submissions`.
STUDY_ABANDONED_AFTER_DAYS = float(os.environ.get("STUDY_ABANDONED_AFTER_DAYS", "30"))
# A finished submission that took less than this fraction of the study's median time is flagged
# as a speeder on its submissions page (and left out of the IDs to approve).
STUDY_SPEEDER_FRACTION = float(os.environ.get("STUDY_SPEEDER_FRACTION", "0.5"))
DATA_UPLOAD_MAX_NUMBER_FIELDS = 500

# Rate limits count in this cache (core/rate_counters.py), which every process must share: by
# default Django's database cache, whose table `migrate` creates (core/apps.py). Another shared
# cache (Redis, Memcached) may be named with CACHE_BACKEND and CACHE_LOCATION; a per-process one
# (local memory) lets each gunicorn worker count alone, multiplying every limit.
CACHES = {
    "default": {
        "BACKEND": os.environ.get("CACHE_BACKEND", "django.core.cache.backends.db.DatabaseCache"),
        "LOCATION": os.environ.get("CACHE_LOCATION", "userbench_cache"),
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: scripts without valid credentials get 401 with a WWW-Authenticate header.
        # Looked up by the token's hash (core/tokens.py), failed attempts limited per client;
        # `Authorization: Token <token>` as before.
        "core.tokens.HashedTokenAuthentication",
        "core.auth.WorkspaceSessionAuthentication",
        # Last: requests no class above signed in, throttled per client before any permission check.
        "core.throttling.AnonymousApiAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.api_exception_handler",
    # Anonymous requests are throttled by AnonymousApiAuthentication above, before permissions.
    "DEFAULT_THROTTLE_CLASSES": ["core.throttling.UserApiThrottle"],
    # Which X-Forwarded-For entry is the client: none without a proxy (a client could write the
    # header itself), the proxy's own with BEHIND_TLS_PROXY.
    "NUM_PROXIES": int(os.environ.get("NUM_PROXIES", "1" if env_bool("BEHIND_TLS_PROXY", False) else "0")),
    # DRF's limit/offset pagination, with both parameters checked for range (at most 1,000 a page).
    "DEFAULT_PAGINATION_CLASS": "core.pagination.BoundedLimitOffsetPagination",
    # `?format=csv|jsonl` belongs to the export endpoints, not to renderer selection.
    "URL_FORMAT_OVERRIDE": None,
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    # The schema documents how to sign in; the anonymous throttle is no way to.
    "AUTHENTICATION_WHITELIST": [
        "core.tokens.HashedTokenAuthentication",
        "core.auth.WorkspaceSessionAuthentication",
    ],
    "TITLE": "Userbench API",
    "DESCRIPTION": "User-centric evaluation of LLMs: studies, datasets, judge runs, annotation.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Served from the sidecar package: the docs work offline, no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# User study: an optional GeoIP2/GeoLite2 *country* database (.mmdb). When set, a participant's
# country is suggested from their address at consent; the address itself is never stored.
GEOIP_COUNTRY_DB = os.environ.get("GEOIP_COUNTRY_DB", "")

# Django's database sessions, read with one plain query on every signed-in request (core/sessions.py).
SESSION_ENGINE = "core.sessions"

# Security: strict whenever DEBUG is off (`manage.py check --deploy` is clean).
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
LANGUAGE_COOKIE_SECURE = not DEBUG
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
# Every page: scripts, styles, images and fonts from this site only, no inline script, no
# plug-ins, no framing; forms post here (or, for the completion redirect, to Prolific).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF, "https://app.prolific.com"],
}
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": "plain"}},
    "root": {"handlers": ["stdout"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        # httpx logs full request lines; keep it quiet so nothing sensitive leaks.
        "httpx": {"level": "WARNING"},
        # openai 3.x ships its HTTP client as httpx2, which logs every request line at INFO.
        "httpx2": {"level": "WARNING"},
        "openai": {"level": "WARNING"},
    },
}
