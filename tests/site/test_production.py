"""The production profile: one switch (LEGALMEM_PRODUCTION=1) gives HTTPS-only settings, secure
cookies, HSTS and an enforced Content-Security-Policy; `manage.py check --deploy` is clean with it;
the SSL redirect can be switched off alone; a malformed value is one line naming the variable."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

BASE_DIR = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "LEGALMEM_PRODUCTION": "1",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "legalmem.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://legalmem.example.org",
}
SHOWN = ["SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER", "CSP_MODE",
         "EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT"]


def manage(args: list[str], env_changes: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("SECURE_", "LEGALMEM_PRODUCTION", "CSP_", "EMAIL_", "SESSION_", "CSRF_"))}
    env.update({"DATABASE_URL": "postgresql://u@localhost/db", **env_changes})
    return subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True,
                          text=True, timeout=180)


def settings_with(env_changes: dict[str, str]) -> dict:
    code = f"from django.conf import settings; import json; print(json.dumps({{n: getattr(settings, n) for n in {SHOWN!r}}}))"
    result = manage(["shell", "-c", code], env_changes)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_check_deploy_is_clean_with_the_production_profile():
    result = manage(["check", "--deploy"], PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout + result.stderr
    assert "WARNING" not in result.stdout + result.stderr
    # without the profile the same checks complain (so the profile is what makes it clean)
    plain = manage(["check", "--deploy"], {k: v for k, v in PRODUCTION_ENV.items() if k != "LEGALMEM_PRODUCTION"})
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in plain.stdout + plain.stderr


def test_the_profile_sets_everything_and_the_proxy_settings_can_be_chosen():
    production = settings_with(PRODUCTION_ENV)
    assert production["SECURE_SSL_REDIRECT"]
    assert production["SESSION_COOKIE_SECURE"]
    assert production["CSRF_COOKIE_SECURE"]
    assert production["SECURE_HSTS_SECONDS"] == 31536000
    assert production["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    assert production["CSP_MODE"] == "enforce"
    assert production["SECURE_PROXY_SSL_HEADER"] is None
    assert production["EMAIL_BACKEND"] == "logins.mail.NoMailServerBackend"  # default: no mail server

    behind_proxy = settings_with({**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": "0",
                                  "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto: https", "CSP_MODE": "report-only",
                                  "EMAIL_HOST": "mail.example.org", "EMAIL_PORT": "587"})
    assert behind_proxy["SECURE_SSL_REDIRECT"] is False
    assert behind_proxy["SESSION_COOKIE_SECURE"] is True
    assert behind_proxy["SECURE_HSTS_SECONDS"] == 31536000
    assert behind_proxy["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert behind_proxy["CSP_MODE"] == "report-only"
    assert behind_proxy["EMAIL_BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert (behind_proxy["EMAIL_HOST"], behind_proxy["EMAIL_PORT"]) == ("mail.example.org", 587)

    development = settings_with({"SECRET_KEY": "x" * 40})
    assert not development["SECURE_SSL_REDIRECT"]
    assert development["CSP_MODE"] == "enforce"  # enforced by default, not only in production


@pytest.mark.parametrize("env_changes, variable", [
    ({"SECURE_PROXY_SSL_HEADER": "https"}, "SECURE_PROXY_SSL_HEADER"),
    ({"SECURE_SSL_REDIRECT": "sometimes"}, "SECURE_SSL_REDIRECT"),
    ({"LEGALMEM_PRODUCTION": "prod"}, "LEGALMEM_PRODUCTION"),
    ({"CSP_MODE": "strict"}, "CSP_MODE"),
    ({"EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "EMAIL_USE_TLS"),
    ({"EMAIL_PORT": "0"}, "EMAIL_PORT"),
])
def test_a_malformed_production_setting_is_one_line_naming_the_variable(env_changes, variable):
    result = manage(["check"], {"SECRET_KEY": "x" * 40, **env_changes})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("configuration error: "), result.stderr
    assert variable in lines[0], result.stderr
