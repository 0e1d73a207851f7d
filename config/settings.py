"""Diligence settings: one file, every value from the environment.

The embedded default (no environment at all) is a development setup: SQLite
under ``var/``, Celery tasks run eagerly in-process, files under ``var/``.
Production sets ``DEBUG=0`` and at least ``SECRET_KEY``, ``ALLOWED_HOSTS``,
``DATABASE_URL`` and ``CELERY_BROKER_URL``. A malformed value stops start-up
with a message naming the variable, rather than running half-configured.
"""

import os
import sys
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", default=True)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "development-only-key-never-use-in-production-0123456789abcdef"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

VAR_DIR = Path(env_str("DILIGENCE_VAR_DIR", str(BASE_DIR / "var")))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "csp",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "apps.core",
    "apps.accounts",
    "apps.cases",
    "apps.vendors",
    "apps.offers",
    "apps.sizing",
    "apps.scorecards",
    "apps.contracts",
    "apps.assessments",
    "apps.access",
    "apps.evidence",
    "apps.packets",
    "apps.audit",
    "apps.approvals",
    "apps.costs",
    "apps.acceptance",
    "apps.comments",
    "apps.workloads",
    "apps.portal",
    "apps.casework",
]

MIDDLEWARE = [
    # First: a request waits for its slot before anything opens a database connection.
    # Only under runserver on PostgreSQL (RUNSERVER_MAX_REQUESTS); elsewhere it steps aside.
    "apps.core.middleware.DevServerConcurrencyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "apps.core.uploads.UploadLimitMiddleware",  # before CSRF, which reads the body
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Marks the session's person as verified by a second factor (user.is_verified()).
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # The code after the password; set-up first where the role requires it.
    "apps.accounts.twofactor.TwoFactorMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "apps.core.middleware.OutOfRangeIsNotFoundMiddleware",
    "apps.core.middleware.StorageUnavailableMiddleware",
    "apps.core.middleware.DuplicateIsConflictMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes requires: it turns a lock-out into its response.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # First, so a locked-out user is refused before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    # With LOCAL_PASSWORDS off, refuses passwords but the break-glass administrators'.
    "apps.accounts.sso.LocalPasswordsOff",
    # Permission checks only: a user's and their groups' permissions in one query.
    "apps.accounts.backends.OneQueryPermissionBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"
# Error pages and reports mask secrets, the PKCS#11 PIN included.
DEFAULT_EXCEPTION_REPORTER_FILTER = "apps.core.debug.DiligenceExceptionReporterFilter"
WSGI_APPLICATION = "config.wsgi.application"

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
                "apps.accounts.context_processors.roles",
            ],
        },
    },
]

_default_db = f"sqlite:///{VAR_DIR / 'diligence.sqlite3'}"
try:
    DATABASES = {
        "default": dj_database_url.parse(
            env_str("DATABASE_URL") or _default_db,
            conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
            # A persistent connection is checked before each request reuses it,
            # so a database restart costs no failed request.
            conn_health_checks=True,
        )
    }
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
# The few queries that cost more to plan than to run (a case's timeline) are prepared on
# a PostgreSQL connection and planned once (apps/core/prepared.py). A connection pooler
# in transaction mode that cannot keep prepared statements (PgBouncer before 1.21, or
# without max_prepared_statements) needs this off.
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
# ``manage.py runserver`` serves each request in a thread of its own, and each thread opens
# a database connection of its own: on PostgreSQL, 200 people at once would ask for 200,
# past its max_connections (100 by default), and requests would fail. There it serves at
# most this many requests at once and the others wait for a slot
# (apps.core.middleware.DevServerConcurrencyMiddleware); 0 lifts the bound. Production runs
# gunicorn with a bounded number of workers instead (README, "Web server and database
# connections").
RUNSERVER = sys.argv[1:2] == ["runserver"]
RUNSERVER_MAX_REQUESTS = (
    env_int("RUNSERVER_MAX_REQUESTS", 10)
    if RUNSERVER and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    else 0
)
if RUNSERVER_MAX_REQUESTS < 0:
    raise ImproperlyConfigured("RUNSERVER_MAX_REQUESTS must be 0 (no bound) or more.")
if RUNSERVER_MAX_REQUESTS:
    # A kept connection would outlive its request's thread, uncounted by the slots
    # (Django: persistent connections are of no use under the development server).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _sqlite_options = DATABASES["default"].setdefault("OPTIONS", {})
    # A second writer waits (up to 20 s) for the lock instead of failing at once.
    _sqlite_options["timeout"] = 20
    # Write transactions take the lock when they begin: a transaction that read
    # first and then wrote would otherwise fail with "database is locked" at
    # once (SQLite cannot wait there without risking a deadlock).
    _sqlite_options["transaction_mode"] = "IMMEDIATE"
    # Readers do not wait for a writer to finish.
    _sqlite_options["init_command"] = "PRAGMA journal_mode=WAL;"
    # SQLite creates its file but not the folder: a fresh checkout has no var/ yet.
    if DATABASES["default"]["NAME"] and DATABASES["default"]["NAME"] != ":memory:":
        Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "approvals:dashboard"  # My work
LOGOUT_REDIRECT_URL = "login"

# Single sign-on with the organisation's OpenID Connect provider (apps/accounts/sso.py):
# on when the client id and the provider's endpoints are set.
OIDC_RP_CLIENT_ID = env_str("OIDC_RP_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = env_str("OIDC_RP_CLIENT_SECRET")
OIDC_OP_AUTHORIZATION_ENDPOINT = env_str("OIDC_OP_AUTHORIZATION_ENDPOINT")
OIDC_OP_TOKEN_ENDPOINT = env_str("OIDC_OP_TOKEN_ENDPOINT")
OIDC_OP_USER_ENDPOINT = env_str("OIDC_OP_USER_ENDPOINT")
OIDC_OP_JWKS_ENDPOINT = env_str("OIDC_OP_JWKS_ENDPOINT")
OIDC_RP_SIGN_ALGO = env_str("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = env_str("OIDC_RP_SCOPES", "openid email profile groups")
OIDC_USE_PKCE = True
OIDC_PROVIDER_NAME = env_str("OIDC_PROVIDER_NAME") or _("your organisation")
# The claim that lists a person's groups, and which group gives which role
# ("gpu-buyers=procurement_reviewer,gpu-legal=legal_reviewer,..."): no mapping, no role.
OIDC_GROUPS_CLAIM = env_str("OIDC_GROUPS_CLAIM", "groups")
OIDC_ROLE_MAP = env_list("OIDC_ROLE_MAP", [])
OIDC_ENABLED = bool(
    OIDC_RP_CLIENT_ID
    and OIDC_OP_AUTHORIZATION_ENDPOINT
    and OIDC_OP_TOKEN_ENDPOINT
    and OIDC_OP_JWKS_ENDPOINT
)
if OIDC_ENABLED:
    AUTHENTICATION_BACKENDS.append("apps.accounts.sso.RoleMappingOIDCBackend")
LOGIN_REDIRECT_URL_FAILURE = "login"
# Off: passwords sign in only the break-glass administrators named here.
LOCAL_PASSWORDS = env_bool("LOCAL_PASSWORDS", default=True)
BREAK_GLASS_USERS = env_list("BREAK_GLASS_USERS", [])
if not LOCAL_PASSWORDS and not OIDC_ENABLED:
    raise ImproperlyConfigured(
        "LOCAL_PASSWORDS is off but single sign-on is not set up: only BREAK_GLASS_USERS "
        "could sign in. Set the OIDC_* variables, or leave LOCAL_PASSWORDS on."
    )

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True
# Numbers are grouped only where apps.core.formats asks for it (amounts people read);
# raw values in attributes, inputs and exports stay ungrouped. config/formats gives
# Chinese pages the same comma grouping as English ones, as finance documents use.
USE_THOUSAND_SEPARATOR = False
FORMAT_MODULE_PATH = ["config.formats"]

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
# Where evidence bundles, packets, attachments and recorded chain heads are kept:
# ``local`` (files under MEDIA_ROOT, each synced to disk) or ``s3`` (a private bucket
# of any S3-compatible store). Either way every download re-checks the SHA-256.
DILIGENCE_STORAGE = env_str("DILIGENCE_STORAGE", "local").strip().lower() or "local"
AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL") or None
AWS_S3_REGION_NAME = env_str("AWS_S3_REGION_NAME") or None
AWS_LOCATION = env_str("AWS_LOCATION").strip("/")
AWS_S3_ADDRESSING_STYLE = env_str("AWS_S3_ADDRESSING_STYLE") or None


def s3_storage(
    *,
    bucket: str,
    endpoint_url: str | None,
    region: str | None,
    location: str = "",
    access_key: str | None = None,
    secret_key: str | None = None,
    addressing_style: str | None = None,
) -> dict:
    """The default storage in an S3 bucket (the tests build theirs here too)."""
    from botocore.config import Config

    if not bucket:
        raise ImproperlyConfigured("DILIGENCE_STORAGE=s3 needs AWS_STORAGE_BUCKET_NAME")
    if addressing_style not in (None, "auto", "path", "virtual"):
        raise ImproperlyConfigured(
            f"AWS_S3_ADDRESSING_STYLE must be auto, path or virtual, got {addressing_style!r}"
        )
    return {
        "BACKEND": "apps.core.s3.PrivateS3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "endpoint_url": endpoint_url,
            "region_name": region,
            "location": location,
            # Unset: boto3's own chain (instance or pod role, ~/.aws, AWS_* variables).
            "access_key": access_key,
            "secret_key": secret_key,
            # Private objects, never overwritten, never reached by URL (apps.core.storage).
            "default_acl": None,
            "file_overwrite": False,
            # A file read from the bucket is held in memory up to 8 MiB, on disk beyond.
            "max_memory_size": 8 * 1024 * 1024,
            # A store that is down fails a request in seconds, not minutes.
            "client_config": Config(
                connect_timeout=env_int("AWS_S3_CONNECT_TIMEOUT", 5),
                read_timeout=env_int("AWS_S3_READ_TIMEOUT", 60),
                retries={"mode": "standard", "max_attempts": 3},
                s3={"addressing_style": addressing_style or "auto"},
            ),
        },
    }


if DILIGENCE_STORAGE == "s3":
    _default_storage = s3_storage(
        bucket=AWS_STORAGE_BUCKET_NAME,
        endpoint_url=AWS_S3_ENDPOINT_URL,
        region=AWS_S3_REGION_NAME,
        location=AWS_LOCATION,
        access_key=env_str("AWS_ACCESS_KEY_ID") or None,
        secret_key=env_str("AWS_SECRET_ACCESS_KEY") or None,
        addressing_style=AWS_S3_ADDRESSING_STYLE,
    )
elif DILIGENCE_STORAGE == "local":
    _default_storage = {
        "BACKEND": env_str("FILE_STORAGE_BACKEND", "apps.core.storage.DurableFileSystemStorage")
    }
else:
    raise ImproperlyConfigured(f"DILIGENCE_STORAGE must be local or s3, got {DILIGENCE_STORAGE!r}")
STORAGES = {
    "default": _default_storage,
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# --- Celery -----------------------------------------------------------------
# Without a broker the embedded default runs every task eagerly, in-process,
# so the same code paths work with no Redis.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
# Without a broker, a long task started from a page (issuing a packet, verifying
# the chain) runs in a small thread pool of the web process after its request
# commits, so the page answers at once and shows the task's progress
# (apps.core.background). Off, it runs inside the request. No effect with a broker.
BACKGROUND_TASKS = env_bool("BACKGROUND_TASKS", True)
BACKGROUND_TASK_THREADS = env_int("BACKGROUND_TASK_THREADS", 2)
if BACKGROUND_TASK_THREADS < 1:
    raise ImproperlyConfigured("BACKGROUND_TASK_THREADS must be at least 1")
# A task is acknowledged only once it has finished: a worker killed mid-task
# (SIGKILL, out of memory, a lost machine) leaves its message to be delivered
# again, so a task must be safe to run twice (the packet task is). A pool
# process lost mid-task requeues its message at once; a whole worker lost leaves
# it unacknowledged in Redis until CELERY_BROKER_VISIBILITY_TIMEOUT (seconds)
# has passed, then any worker takes it. The timeout must exceed the longest
# task and retry countdown, or a second worker starts a task still running.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# One message reserved per pool process: a killed worker strands no backlog.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_TIMEOUT = 3
_visibility_timeout_s = env_int("CELERY_BROKER_VISIBILITY_TIMEOUT", 3600)
if _visibility_timeout_s < 1:
    raise ImproperlyConfigured("CELERY_BROKER_VISIBILITY_TIMEOUT must be at least 1 second")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _visibility_timeout_s,
    # Look for messages past their visibility timeout every tenth of it
    # (between 1 s and 60 s), so a short timeout also recovers quickly.
    "unacked_restore_interval": max(1, min(60, _visibility_timeout_s // 10)),
    "unacked_restore_throttle": 1,
}
# Periodic work, run by `celery -A config beat` (times in TIME_ZONE).
CELERY_BEAT_SCHEDULE = {
    "verify-audit-chain-nightly": {
        "task": "apps.audit.tasks.verify_audit_chain_task",
        "schedule": crontab(hour=2, minute=30),
    },
    "approvals-send-daily-digests": {
        "task": "apps.casework.tasks.send_daily_digests_task",
        "schedule": crontab(hour=6, minute=45),
    },
    "core-send-notification-digests": {
        "task": "apps.core.tasks.send_notification_digests_task",
        "schedule": crontab(hour=6, minute=50),
    },
    "approvals-send-reminders-daily": {
        "task": "apps.casework.tasks.send_reminders_task",
        "schedule": crontab(hour=7, minute=0),
    },
    # Hourly, so a reassessment completes soon after its last answer; it starts on its due day.
    "casework-run-reassessments": {
        "task": "apps.casework.tasks.run_reassessments_task",
        "schedule": crontab(minute=20),
    },
    "approvals-record-stale-approvals": {
        "task": "apps.approvals.tasks.record_stale_approvals_task",
        "schedule": crontab(minute="*/15"),
    },
    "approvals-record-expired-finding-acceptances": {
        "task": "apps.approvals.tasks.record_expired_acceptances_task",
        "schedule": crontab(hour=0, minute=15),
    },
    "acceptance-settle-conditional-approvals": {
        "task": "apps.acceptance.tasks.settle_conditions_task",
        "schedule": crontab(minute="*/15"),
    },
    "acceptance-void-stale-signoffs": {
        "task": "apps.acceptance.tasks.void_stale_signoffs_task",
        "schedule": crontab(minute="*/15"),
    },
    "evidence-requeue-waiting-uploads": {
        "task": "apps.evidence.tasks.requeue_waiting_uploads_task",
        "schedule": crontab(minute="*/10"),
    },
    "evidence-prune-finished-uploads": {
        "task": "apps.evidence.tasks.prune_finished_uploads_task",
        "schedule": crontab(hour=3, minute=10),
    },
}

# History keeps the whole reason a person gave, however long (the default
# column is 100 characters, which PostgreSQL enforces).
SIMPLE_HISTORY_HISTORY_CHANGE_REASON_USE_TEXT_FIELD = True

# --- REST API ---------------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes DRF answer 401, not 403,
    # to an unauthenticated request.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["apps.core.permissions.DenyAll"],
    # No multipart by default: it spools files of any size to disk before a view sees
    # them. An upload endpoint names MultiPartParser and checks its limit first.
    "DEFAULT_PARSER_CLASSES": [
        "apps.core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.BoundedPageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
        "rest_framework.filters.SearchFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_THROTTLE_ANON", "60/minute"),
        "user": env_str("API_THROTTLE_USER", "1200/minute"),
    },
    "EXCEPTION_HANDLER": "apps.core.api.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Diligence API",
    "DESCRIPTION": "Procurement cases, offers, declared specs, sizing and scorecards.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs are for signed-in users, like the API itself.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "DtypeEnum": "apps.sizing.models.DTYPE_CHOICES",
        "DocumentKindEnum": "apps.packets.models.DocumentKind",
        "WorkloadSetKindEnum": "apps.workloads.models.SetKind",
        "EncryptionEnum": "apps.assessments.audit_facts.ENCRYPTION_CHOICES",
        "ContractDocumentKindEnum": "apps.contracts.models.DocumentKind",
        "VendorTierEnum": "apps.vendors.models.VendorTier",
    },
}

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env_str("CACHE_URL"),
    }
    if env_str("CACHE_URL")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# --- Security ---------------------------------------------------------------
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SESSION_COOKIE_HTTPONLY = True
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if not DEBUG:
    # /healthz is probed over plain HTTP inside the cluster.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# Login throttling: after AXES_FAILURE_LIMIT failed sign-ins for one user name
# from one address, that pair is locked out for AXES_COOLOFF_MINUTES.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_IPWARE_PROXY_COUNT = env_int("AXES_PROXY_COUNT", 0)

# Two-factor sign-in (django-otp): people whose role is listed (comma-separated role
# names: procurement_reviewer, legal_reviewer, tech_lead, finance_approver, auditor,
# admin) must set up an authenticator app, pass its code after the password, and cannot
# decide an approval or waive a red flag (nor open the admin) without it. Empty: not required
# (anyone may still turn it on for themselves).
TWO_FACTOR_REQUIRED_ROLES = env_list("TWO_FACTOR_REQUIRED_ROLES", [])
OTP_TOTP_ISSUER = "Diligence"  # the name authenticator apps show
# The admin never shows a person's secret key, setup link or recovery codes.
OTP_ADMIN_HIDE_SENSITIVE_DATA = True

# Content-Security-Policy: no inline or third-party scripts or styles anywhere (a
# chart's colours are SVG attributes, not styles); images may be data: URIs.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "diligence@localhost")

ORGANISATION_NAME = env_str("ORGANISATION_NAME", "Example Organisation")


def _role_leads(pairs: list[str]) -> dict[str, list[str]]:
    """``ROLE_LEADS`` ("legal_reviewer=lena,tech_lead=tariq"): who leads each role on My
    work (an overdue assignment is shown to them); a role named nowhere is led by the
    administrators (docs/rules/my-work.md#assignments)."""
    leads: dict[str, list[str]] = {}
    for pair in pairs:
        role, _sep, username = pair.partition("=")
        if role.strip() and username.strip():
            leads.setdefault(role.strip(), []).append(username.strip())
    return leads


ROLE_LEADS = _role_leads(env_list("ROLE_LEADS", []))
# Where people reach the site (``https://diligence.example.org``): every link an e-mail or
# a webhook carries is built from it, never from the host a request came in on. Required in
# production: a default there would send everyone to a development server's address.
SITE_URL = env_str("SITE_URL").strip().rstrip("/")
if not SITE_URL:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SITE_URL must be set when DEBUG is off, e.g. https://diligence.example.org"
        )
    SITE_URL = "http://127.0.0.1:8000"
_site = urlsplit(SITE_URL)
if _site.scheme not in {"http", "https"} or not _site.netloc or _site.query or _site.fragment:
    raise ImproperlyConfigured(
        f"SITE_URL must be an absolute http or https address such as "
        f"https://diligence.example.org, got {SITE_URL!r}"
    )

# Evidence uploads from the harness: refused above this size (413) before the
# body is read; harness tokens expire after this many hours (at most 720).
EVIDENCE_MAX_BYTES = env_int("EVIDENCE_MAX_BYTES", 64 * 1024 * 1024)
EVIDENCE_TOKEN_TTL_HOURS = env_int("EVIDENCE_TOKEN_TTL_HOURS", 72)
# Refused and failed uploads (the reason, not the bytes) are kept this long.
EVIDENCE_UPLOAD_KEEP_DAYS = env_int("EVIDENCE_UPLOAD_KEEP_DAYS", 90)
# An upload still unread this many minutes after it arrived is handed to a worker again.
EVIDENCE_UPLOAD_REQUEUE_MINUTES = env_int("EVIDENCE_UPLOAD_REQUEUE_MINUTES", 15)
# Per-card matmul pass bands and environment requirements replacing the built-in ones
# (by card and by key); empty keeps the datasheet's bands and the defaults.
EVIDENCE_MATMUL_BANDS: dict = {}
EVIDENCE_ENVIRONMENT: dict = {}
# The largest export ZIP that "Verify an export" reads.
AUDIT_EXPORT_MAX_UPLOAD_BYTES = env_int("AUDIT_EXPORT_MAX_UPLOAD_BYTES", 512 * 1024 * 1024)
# The case page reads where each case stands from a stored standing, kept current by the
# tracked writes (``apps.casework.standing``); 0 computes it on every view instead.
CASE_STANDING_STORED = env_bool("CASE_STANDING_STORED", True)
# Acceptance attachments (logs, screenshots): refused above this size before a byte is read.
ACCEPTANCE_ATTACHMENT_MAX_BYTES = env_int("ACCEPTANCE_ATTACHMENT_MAX_BYTES", 20 * 1024 * 1024)
# A case's prompt or core sample set (JSONL): refused above this size before it is read.
WORKLOAD_SET_MAX_BYTES = env_int("WORKLOAD_SET_MAX_BYTES", 256 * 1024 * 1024)
# A red-flag waiver's evidence file: refused above this size before a byte is read.
WAIVER_EVIDENCE_MAX_BYTES = env_int("WAIVER_EVIDENCE_MAX_BYTES", 20 * 1024 * 1024)
# A signed contract document (PDF or DOCX): refused above this size before a byte is read.
CONTRACT_DOCUMENT_MAX_BYTES = env_int("CONTRACT_DOCUMENT_MAX_BYTES", 30 * 1024 * 1024)

# Inviting a person: the link to set their password works this many days (at most 30).
ACCOUNT_INVITATION_DAYS = env_int("ACCOUNT_INVITATION_DAYS", 7)

# The vendor portal: an invitation's link works this many days (at most 90); a one-time
# code this many minutes; a portal session this many seconds after the code; a vendor's
# document is refused above this size before a byte is read.
PORTAL_INVITATION_DAYS = env_int("PORTAL_INVITATION_DAYS", 14)
PORTAL_CODE_MINUTES = env_int("PORTAL_CODE_MINUTES", 10)
PORTAL_SESSION_SECONDS = env_int("PORTAL_SESSION_SECONDS", 2 * 60 * 60)
PORTAL_DOCUMENT_MAX_BYTES = env_int("PORTAL_DOCUMENT_MAX_BYTES", 20 * 1024 * 1024)
# What one invitation takes in all: a count of documents and their bytes together.
PORTAL_DOCUMENTS_PER_INVITATION = env_int("PORTAL_DOCUMENTS_PER_INVITATION", 50)
PORTAL_DOCUMENTS_TOTAL_MAX_BYTES = env_int("PORTAL_DOCUMENTS_TOTAL_MAX_BYTES", 200 * 1024 * 1024)

# Signed audit packets. Development signs with a self-signed key made on first
# use in PACKET_SIGNING_DIR; production sets either a PKCS#12 file and its
# passphrase or a key in a PKCS#11 token (module, token label, PIN, key label,
# and the certificate's label when it differs), and optionally an RFC 3161
# timestamp authority.
PACKET_SIGNING_DIR = Path(env_str("PACKET_SIGNING_DIR", str(VAR_DIR / "signing")))
PACKET_SIGNING_PKCS12_PATH = env_str("PACKET_SIGNING_PKCS12_PATH") or None
PACKET_SIGNING_PKCS12_PASSPHRASE = env_str("PACKET_SIGNING_PKCS12_PASSPHRASE") or None
PACKET_SIGNING_PKCS11_MODULE = env_str("PACKET_SIGNING_PKCS11_MODULE") or None
PACKET_SIGNING_PKCS11_TOKEN_LABEL = env_str("PACKET_SIGNING_PKCS11_TOKEN_LABEL") or None
PACKET_SIGNING_PKCS11_PIN = env_str("PACKET_SIGNING_PKCS11_PIN") or None
PACKET_SIGNING_PKCS11_KEY_LABEL = env_str("PACKET_SIGNING_PKCS11_KEY_LABEL") or None
PACKET_SIGNING_PKCS11_CERT_LABEL = env_str("PACKET_SIGNING_PKCS11_CERT_LABEL") or None
PACKET_TSA_URL = env_str("PACKET_TSA_URL") or None
# How many processes lay out a packet's chapters at once: 0 (the default) one
# per CPU the worker may use (its CPU affinity), 1 lays them out one after the
# other in the worker's own process (parallel rendering off).
PACKET_RENDER_PROCESSES = env_int("PACKET_RENDER_PROCESSES", 0)
if PACKET_RENDER_PROCESSES < 0:
    raise ImproperlyConfigured("PACKET_RENDER_PROCESSES must be 0 (one per CPU) or more")


def _check_packet_signing_key() -> None:
    pkcs11 = {
        "PACKET_SIGNING_PKCS11_MODULE": PACKET_SIGNING_PKCS11_MODULE,
        "PACKET_SIGNING_PKCS11_TOKEN_LABEL": PACKET_SIGNING_PKCS11_TOKEN_LABEL,
        "PACKET_SIGNING_PKCS11_PIN": PACKET_SIGNING_PKCS11_PIN,
        "PACKET_SIGNING_PKCS11_KEY_LABEL": PACKET_SIGNING_PKCS11_KEY_LABEL,
    }
    if not any(pkcs11.values()) and not PACKET_SIGNING_PKCS11_CERT_LABEL:
        return
    if PACKET_SIGNING_PKCS12_PATH or PACKET_SIGNING_PKCS12_PASSPHRASE:
        raise ImproperlyConfigured(
            "Set either PACKET_SIGNING_PKCS12_* or PACKET_SIGNING_PKCS11_*, not both: "
            "packets are signed by one key"
        )
    missing = [name for name, value in pkcs11.items() if not value]
    if missing:
        raise ImproperlyConfigured(f"A PKCS#11 signing key also needs {', '.join(missing)}")
    assert PACKET_SIGNING_PKCS11_MODULE is not None  # one of the values checked just above
    module = Path(PACKET_SIGNING_PKCS11_MODULE)
    if not module.is_absolute() or not module.is_file():
        raise ImproperlyConfigured(
            "PACKET_SIGNING_PKCS11_MODULE must be the absolute path of the PKCS#11 "
            f"library, and {str(module)!r} is not a file"
        )


_check_packet_signing_key()

# A spec verification older than this no longer holds the approval gate
# (docs/rules/approvals.md).
APPROVAL_VERIFICATION_MAX_AGE_DAYS = env_int("APPROVAL_VERIFICATION_MAX_AGE_DAYS", 30)
# The organisation's minimum retention of the vendor's logs, in days; fewer (or none
# stated) is a finding legal accepts (docs/rules/data-export.md#audit-facts).
LOG_RETENTION_MIN_DAYS = env_int("LOG_RETENTION_MIN_DAYS", 180)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # WeasyPrint logs a line per page rendered.
    "loggers": {"weasyprint.progress": {"level": "WARNING"}},
}
