"""Production configuration: `check --deploy` is clean, bad values fail loudly."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "x" * 64 + "-a-long-random-production-secret-key",
    "ALLOWED_HOSTS": "diligence.example.org",
    "SITE_URL": "https://diligence.example.org",
    "DATABASE_URL": "sqlite:///:memory:",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    ignored = {"DEBUG", "SECRET_KEY", "SITE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL"}
    clean = {k: v for k, v in os.environ.items() if k not in ignored}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_reports_nothing_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {**PRODUCTION_ENV, "SECRET_KEY": ""}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_without_the_address_people_reach_it_at():
    """Without SITE_URL, e-mailed links would point at a development server's address."""
    env = {**PRODUCTION_ENV, "SITE_URL": ""}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "SITE_URL must be set" in result.stderr


@pytest.mark.parametrize("value", ["diligence.example.org", "ftp://files.example.org", "https://"])
def test_a_site_url_that_is_not_an_absolute_web_address_names_its_variable(value):
    result = manage("check", env={"SITE_URL": value})
    assert result.returncode != 0
    assert "SITE_URL must be an absolute http or https address" in result.stderr


def test_a_malformed_value_names_its_variable():
    result = manage("check", env={"DEBUG": "perhaps"})
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def test_a_malformed_database_url_names_its_variable():
    result = manage("check", env={"DATABASE_URL": "nonsense://"})
    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr


def test_the_embedded_default_migrates_in_a_checkout_without_its_var_folder(tmp_path):
    """A fresh checkout has no var/: the SQLite file's folder is made, then migrate runs.

    The accounts' migrations show the file is made and written where the settings say; every
    migration from scratch, through the same command, builds the tests' own template
    (tests/database.py) at the start of each run."""
    var = tmp_path / "fresh" / "var"
    env = {"DILIGENCE_VAR_DIR": str(var), "DATABASE_URL": ""}
    result = manage("migrate", "auth", "--noinput", "-v0", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (var / "diligence.sqlite3").is_file()
    with sqlite3.connect(var / "diligence.sqlite3") as db:
        applied = db.execute("SELECT app FROM django_migrations").fetchall()
    assert ("auth",) in applied


def test_make_run_links_e_mails_to_where_the_server_listens():
    """`make run HOST=… PORT=…` serves elsewhere than 127.0.0.1:8000: its e-mails link there."""
    env = {k: v for k, v in os.environ.items() if k != "SITE_URL"}
    shown = subprocess.run(
        ["make", "-n", "run", "HOST=diligence.internal", "PORT=9000"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    [line] = [line for line in shown.splitlines() if "runserver" in line]
    command = line.replace(".venv/bin/python manage.py runserver", "printenv SITE_URL #")
    printed = subprocess.run(
        ["sh", "-c", command], env=env, capture_output=True, text=True, timeout=10
    ).stdout
    assert printed.strip() == "http://diligence.internal:9000"
    chosen = subprocess.run(
        ["sh", "-c", command],
        env={**env, "SITE_URL": "https://diligence.example.org"},
        capture_output=True,
        text=True,
        timeout=10,
    ).stdout
    assert chosen.strip() == "https://diligence.example.org"
