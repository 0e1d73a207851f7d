"""Many people at once for a minute: PostgreSQL behind gunicorn, and the SQLite default as
``make run`` serves it. Counts the server errors (the target: none), the latency and the
throughput.

    python benchmarks/load.py --config postgres \\
        --database-url postgres://postgres@127.0.0.1:5432/bench_load   # dropped first, and after
    python benchmarks/load.py --config sqlite
    python benchmarks/load.py --config sqlite --users 5 --duration 2 --output-dir /tmp/x  # smoke

Each configuration, run on its own:

1. A fresh database: the PostgreSQL one (``--database-url``) dropped and created again;
   SQLite in a temporary folder, as ``make run`` keeps it under ``var/``. Migrated, the
   demo loaded (``manage.py seed_demo``), and one signed-in session for each simulated
   person, taking the demo people in turn (procurement, legal, tech lead, finance,
   auditor), with each person's API token. Every URL of the mix is asked once per
   person through Django's test client; the ones a person may not see are left out of
   that person's mix.
2. The server:
   - ``postgres``: gunicorn with 2 sync workers (``--workers``), production settings
     (``DEBUG=0``), ``DATABASE_CONN_MAX_AGE=60``, as ``docker/`` runs it;
   - ``sqlite``: ``manage.py runserver --noreload`` with the embedded default
     (``DEBUG=1``), as ``make run`` serves it.
   Both with the API rate limits lifted (``API_THROTTLE_USER``): five accounts stand
   for all the people, so their limit would be reached for the wrong reason.
3. ``--users`` threads, one per person, each asking one request, waiting for the whole
   answer, pausing (``--think`` seconds on average, uniformly 0.5x to 1.5x), and again,
   for ``--duration`` seconds; a new connection per request. The mix: reads of the main
   pages (case list and page, dashboard, offer, comparison, timeline, approval area,
   offer matrix, search, evidence) 55 %, reads of the API 30 %, writes 15 % (a comment
   on an offer through its page, with the CSRF token; a case created through the API).
   Every request started in the window is waited for and counted.

Reported per kind (page, API, write) and overall: requests, server errors (5xx), other
refusals (4xx), requests that got no answer (connection refused, reset or timed out),
p50 and p95 latency (nearest rank), and throughput (answered requests per second of the
window). The server's log is searched for the errors behind any 5xx. Results are merged
into ``benchmarks/results/load.json`` (one entry per configuration, with its command
line) and rendered to ``load.md`` beside it.
"""

import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from http.client import HTTPConnection, HTTPException
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PEOPLE = ("priya", "lena", "tariq", "fiona", "aude")
COMMENTERS = {"priya", "lena", "tariq", "fiona"}  # the auditor changes nothing
CSRF_SECRET = "benchmarkcsrfsecret0123456789abc"  # 32 characters, as Django's secrets are
SHARES = {"page": 0.55, "api": 0.30, "write": 0.15}
CONFIGS = {
    "postgres": "PostgreSQL, gunicorn (2 sync workers), production settings",
    "sqlite": "SQLite default, manage.py runserver, as make run serves it",
}


# --- the server's environment -------------------------------------------------------------


def base_env(work: Path) -> dict:
    """What both configurations share; the rest of the environment is cleared of any
    setting of Diligence's own, so each runs as it is described."""
    kept = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {
        **kept,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DILIGENCE_VAR_DIR": str(work / "var"),
        "MEDIA_ROOT": str(work / "media"),
        "API_THROTTLE_USER": "100000000/minute",
        "API_THROTTLE_ANON": "100000000/minute",
    }


def server_env(config: str, args, work: Path) -> dict:
    env = base_env(work)
    if config == "postgres":
        env |= {
            "DATABASE_URL": args.database_url,
            "DATABASE_CONN_MAX_AGE": "60",
            "DEBUG": "0",
            "SECRET_KEY": "load-benchmark-" + "x" * 48,
            "ALLOWED_HOSTS": "127.0.0.1,testserver",
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_HSTS_SECONDS": "0",
            "SECURE_HSTS_PRELOAD": "0",
            "STATIC_ROOT": str(work / "static"),
            "LOG_LEVEL": "WARNING",
        }
    else:
        env["ALLOWED_HOSTS"] = "127.0.0.1,testserver"
    return env


def recreate_database(url: str, *, create: bool = True) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            connection.execute(f'CREATE DATABASE "{name}"')


def copy_sqlite(source: Path, target: Path) -> None:
    """A SQLite database copied with SQLite's own backup (its write-ahead log included)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def manage(env: dict, *args: str) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], env=env, check=True, timeout=1800
    )


# --- stage: the people, their sessions and the URLs (runs inside Django) -----------------


def stage_prepare(args, work: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from apps.cases.models import ProcurementCase
    from apps.casework.demo import DEMO_CASE_NAME
    from apps.evidence.models import EvidenceBundle

    demo = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    offer = demo.offers.order_by("pk").first()
    assert offer is not None
    bundle = EvidenceBundle.objects.order_by("pk").first()
    cases = list(ProcurementCase.objects.order_by("pk").values_list("pk", flat=True))
    pages = [
        "/cases/",
        *(f"/cases/{pk}/" for pk in cases),
        "/dashboard/",
        f"/offers/{offer.pk}/",
        f"/cases/{demo.pk}/comparison/",
        f"/cases/{demo.pk}/timeline/",
        f"/cases/{demo.pk}/area/approval/",
        f"/cases/{demo.pk}/matrix/",
        "/search/?q=H200",
        *([f"/evidence/{bundle.pk}/"] if bundle else []),
    ]
    api = [
        "/api/v1/cases/",
        f"/api/v1/cases/{demo.pk}/",
        f"/api/v1/offers/?case={demo.pk}",
        f"/api/v1/evidence-bundles/?case={demo.pk}",
        f"/api/v1/cases/{demo.pk}/timeline/",
    ]
    people, refused = {}, []
    for name in PEOPLE:
        user = get_user_model().objects.get(username=name)
        token, _ = Token.objects.get_or_create(user=user)
        browser = Client()
        browser.force_login(user)
        reader = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
        seen = {}
        for kind, client, paths in (("page", browser, pages), ("api", reader, api)):
            seen[kind] = []
            for path in paths:
                code = client.get(path).status_code
                if code == 200:
                    seen[kind].append(path)
                else:
                    refused.append(f"{name} {path} {code}")
        people[name] = {"token": token.key, **seen}
    sessions = []
    for n in range(args.users):
        name = PEOPLE[n % len(PEOPLE)]
        browser = Client()
        browser.force_login(get_user_model().objects.get(username=name))
        sessions.append({"person": name, "session": browser.cookies["sessionid"].value})
    (work / "people.json").write_text(
        json.dumps(
            {
                "people": people,
                "sessions": sessions,
                "comment_on": f"/comments/offer/{offer.pk}/",
                "refused": refused,
            }
        )
    )


# --- the load (this process is the client, never the server) ----------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, server: subprocess.Popen, *, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server stopped (exit {server.returncode})")
        try:
            connection = HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("the server did not answer /healthz in time")


class Person:
    """One simulated person: their session, their token and what they may ask for."""

    def __init__(self, number: int, session: dict, plan: dict, seed: int) -> None:
        self.number = number
        self.name = session["person"]
        self.cookie = f"sessionid={session['session']}; csrftoken={CSRF_SECRET}"
        mine = plan["people"][self.name]
        self.token = mine["token"]
        self.pages, self.api = mine["page"], mine["api"]
        self.priya_token = plan["people"]["priya"]["token"]
        self.comment_on = plan["comment_on"]
        self.random = random.Random(seed)
        self.writes = 0

    def next_request(self) -> tuple[str, str, str, dict, bytes | None]:
        """(kind, method, path, headers, body) drawn from the mix."""
        draw = self.random.random()
        if draw < SHARES["page"] and self.pages:
            path = self.random.choice(self.pages)
            return "page", "GET", path, {"Cookie": self.cookie}, None
        if draw < SHARES["page"] + SHARES["api"] and self.api:
            path = self.random.choice(self.api)
            return "api", "GET", path, {"Authorization": f"Token {self.token}"}, None
        self.writes += 1
        label = f"person {self.number}, write {self.writes}"
        if self.name in COMMENTERS and self.random.random() < 0.5:
            body = urlencode(
                {"body": f"Load test note ({label}).", "csrfmiddlewaretoken": CSRF_SECRET}
            )
            headers = {
                "Cookie": self.cookie,
                "Content-Type": "application/x-www-form-urlencoded",
            }
            return "write", "POST", self.comment_on, headers, body.encode()
        body = json.dumps({"name": f"Load test case ({label})", "workload": "inference"})
        headers = {"Authorization": f"Token {self.priya_token}", "Content-Type": "application/json"}
        return "write", "POST", "/api/v1/cases/", headers, body.encode()


def one_request(port: int, method: str, path: str, headers: dict, body, timeout_s: float):
    """(seconds, status or None, error or None)."""
    began = time.perf_counter()
    try:
        connection = HTTPConnection("127.0.0.1", port, timeout=timeout_s)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            return time.perf_counter() - began, response.status, None
        finally:
            connection.close()
    except (OSError, HTTPException) as error:
        return time.perf_counter() - began, None, type(error).__name__


def run_load(port: int, plan: dict, args) -> dict:
    people = [
        Person(n, session, plan, seed=args.seed + n) for n, session in enumerate(plan["sessions"])
    ]
    records: list[tuple[str, str, float, int | None, str | None]] = []
    lock = threading.Lock()
    began = time.perf_counter()
    deadline = began + args.duration

    def live(person: Person) -> None:
        # Arrive spread over the first pause, not all in the same instant.
        time.sleep(person.random.uniform(0, args.think))
        while time.perf_counter() < deadline:
            kind, method, path, headers, body = person.next_request()
            seconds, code, error = one_request(port, method, path, headers, body, args.timeout)
            with lock:
                records.append((kind, f"{method} {path}", seconds, code, error))
            time.sleep(person.random.uniform(0.5 * args.think, 1.5 * args.think))

    threads = [threading.Thread(target=live, args=(p,), daemon=True) for p in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.duration + args.timeout + 3 * args.think + 30)
    return summarise(records, args.duration)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))  # nearest rank
    return ordered[rank]


def _row(records: list, wall: float) -> dict:
    answered = [r for r in records if r[3] is not None]
    ms = [r[2] * 1000 for r in answered]
    return {
        "requests": len(records),
        "server_errors": sum(1 for r in answered if r[3] >= 500),
        "refused_4xx": sum(1 for r in answered if 400 <= r[3] < 500),
        "no_answer": len(records) - len(answered),
        "p50_ms": round(percentile(ms, 0.50), 1) if ms else None,
        "p95_ms": round(percentile(ms, 0.95), 1) if ms else None,
        "mean_ms": round(statistics.fmean(ms), 1) if ms else None,
        "per_s": round(len(answered) / wall, 2),
    }


def summarise(records: list, wall: float) -> dict:
    rows = {"all": _row(records, wall)}
    for kind in SHARES:
        rows[kind] = _row([r for r in records if r[0] == kind], wall)
    statuses = Counter(str(r[3]) if r[3] is not None else r[4] for r in records)
    failing = Counter(r[1] for r in records if r[3] is None or r[3] >= 400)
    return {
        "window_s": round(wall, 1),
        "rows": rows,
        "statuses": dict(sorted(statuses.items())),
        "failing_requests": dict(failing.most_common(10)),
    }


def server_errors_in(log: Path) -> list[str]:
    """The distinct exceptions the server logged (the last line of each traceback)."""
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    found: Counter = Counter()
    for index, line in enumerate(lines):
        if line.startswith("Traceback"):
            for after in lines[index + 1 :]:
                if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)\b|^\w+\.\w+", after):
                    found[after[:300]] += 1
                    break
    return [f"{count} × {text}" for text, count in found.most_common(10)]


def serve(config: str, args, work: Path, port: int) -> subprocess.Popen:
    log = open(work / "server.log", "w")  # noqa: SIM115 (closed with the process)
    env = server_env(config, args, work)
    if config == "postgres":
        gunicorn = Path(sys.executable).with_name("gunicorn")
        command = [str(gunicorn), "config.wsgi", "--chdir", str(ROOT), "-w", str(args.workers)]
        command += ["-b", f"127.0.0.1:{port}", "--timeout", "120", "--log-level", "warning"]
    else:
        command = [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload"]
        command += [f"127.0.0.1:{port}"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def machine() -> str:
    return (
        f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def run_config(config: str, args) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"diligence-load-{config}-"))
    env = server_env(config, args, work)
    try:
        setup_began = time.perf_counter()
        if config == "postgres":
            recreate_database(args.database_url)
        if args.from_database:
            # A database the demo was seeded into already (with its stored files): copied
            # in place of the embedded default; migrate then only checks it is current.
            (work / "var").mkdir(parents=True, exist_ok=True)
            copy_sqlite(args.from_database, work / "var" / "diligence.sqlite3")
            if args.from_media:
                shutil.copytree(args.from_media, work / "media", dirs_exist_ok=True)
        manage(env, "migrate", "--noinput", "-v0")
        if not args.from_database:
            manage(env, "seed_demo", "-v0")
        if config == "postgres":
            manage(env, "collectstatic", "--noinput", "-v0")
        command = [sys.executable, str(Path(__file__)), "--stage", "prepare", "--work", str(work)]
        command += ["--users", str(args.users)]
        subprocess.run(command, env=env, check=True, timeout=1800)
        plan = json.loads((work / "people.json").read_text())
        setup_s = time.perf_counter() - setup_began

        port = free_port()
        server = serve(config, args, work, port)
        try:
            wait_for(port, server)
            load_before = list(os.getloadavg())
            result = run_load(port, plan, args)
            load_after = list(os.getloadavg())
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        return {
            "config": config,
            "label": CONFIGS[config],
            "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine(),
            "users": args.users,
            "duration_s": args.duration,
            "think_s": args.think,
            "workers": args.workers if config == "postgres" else None,
            "setup_s": round(setup_s, 1),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "refused_while_preparing": plan["refused"],
            "server_errors_logged": server_errors_in(work / "server.log"),
            **result,
        }
    finally:
        if config == "postgres" and not args.keep:
            recreate_database(args.database_url, create=False)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


# --- the results ---------------------------------------------------------------------------

KIND_NAMES = {
    "all": "all requests",
    "page": "pages (session)",
    "api": "API (token)",
    "write": "writes",
}


def render(results: dict) -> str:
    lines = [
        "# Many people at once: PostgreSQL with gunicorn, and the SQLite default",
        "",
        "Produced by `benchmarks/load.py` (each configuration run once, with the command line "
        "below); raw numbers in `load.json` beside this file. Target: no server error (5xx).",
        "",
        "Each simulated person asks a request, reads the whole answer, pauses, and asks again; "
        "a new connection per request. The mix: main pages 55 %, API reads 30 %, writes 15 % "
        "(a comment on an offer through its page, a case created through the API). Latency "
        "from the connection to the last byte; percentiles are nearest-rank; throughput counts "
        "answered requests per second of the window. *No answer*: the connection was refused, "
        "reset or timed out.",
    ]
    for config in CONFIGS:
        run = results.get(config)
        if run is None:
            continue
        lines += [
            "",
            f"## {run['label']}",
            "",
            f"- Command: `{run['command']}` ({run['when']})",
            f"- {run['users']} people for {run['duration_s']} s, pausing {run['think_s']} s on "
            f"average between requests; machine: {run['machine']}, shared with the load "
            "generator and the database.",
            f"- Load average (1, 5, 15 min) before the load: {run['load_average_before']}, "
            f"after: {run['load_average_after']} (other work on the machine shows up here).",
            "",
            "| requests | count | 5xx | 4xx | no answer | p50 | p95 | mean | answered/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for kind, row in run["rows"].items():
            lines.append(
                f"| {KIND_NAMES[kind]} | {row['requests']:,} | {row['server_errors']} | "
                f"{row['refused_4xx']} | {row['no_answer']} | {_ms(row['p50_ms'])} | "
                f"{_ms(row['p95_ms'])} | {_ms(row['mean_ms'])} | {row['per_s']} |"
            )
        everything = run["rows"]["all"]
        errors = everything["server_errors"]
        verdict = "met" if errors == 0 else "not met"
        lines += ["", f"**Server errors: {errors}** (target 0: {verdict})."]
        if everything["per_s"]:
            offered = run["users"] / run["think_s"]
            wait = run["users"] / everything["per_s"] - run["think_s"]
            lines += [
                "",
                f"- Pausing about {run['think_s']:g} s, {run['users']} people ask for up to "
                f"{offered:,.0f} requests a second; the server answered {everything['per_s']}/s, "
                "so nearly every request waits in the server's queue. By Little's law the wait "
                f"is about people ÷ throughput − pause = {wait:,.0f} s, near the mean latency: "
                "the latencies measure this machine's capacity (2 CPUs shared with the load "
                "generator, the database and other work), not one page's cost "
                "(`scale.md` measures that).",
            ]
        statuses = ", ".join(f"{code}: {n:,}" for code, n in run["statuses"].items())
        lines.append(f"- Answers: {statuses}.")
        if run["failing_requests"]:
            failing = "; ".join(f"`{k}` × {n}" for k, n in run["failing_requests"].items())
            lines.append(f"- Requests not answered 2xx/3xx: {failing}.")
        if run["server_errors_logged"]:
            lines.append("- Errors in the server's log: " + "; ".join(run["server_errors_logged"]))
        lines += [f"- {note}" for note in run.get("notes", [])]
        if run["refused_while_preparing"]:
            lines.append(
                "- Left out of a person's mix (refused to that role when prepared): "
                + ", ".join(f"`{r}`" for r in run["refused_while_preparing"])
            )
    return "\n".join(lines) + "\n"


def _ms(value) -> str:
    return "—" if value is None else f"{value:,.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", choices=sorted(CONFIGS), action="append")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--think", type=float, default=1.0, help="mean pause, seconds")
    parser.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn's, for postgres")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/bench_load")
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    parser.add_argument("--render-only", action="store_true", help="load.json to load.md")
    parser.add_argument("--keep", action="store_true", help="keep the database and files")
    parser.add_argument(
        "--from-database",
        type=Path,
        help="sqlite only: start from this database, the demo already seeded, not a new one",
    )
    parser.add_argument("--from-media", type=Path, help="with --from-database: its stored files")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.from_database and args.config != ["sqlite"]:
        parser.error("--from-database is for --config sqlite alone")
    if args.stage == "prepare":
        stage_prepare(args, args.work)
        return

    args.output_dir.mkdir(parents=True, exist_ok=True)
    store = args.output_dir / "load.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    for config in [] if args.render_only else args.config or list(CONFIGS):
        run = run_config(config, args)
        results[config] = run
        store.write_text(json.dumps(results, indent=2) + "\n")
        row = run["rows"]["all"]
        print(
            f"{config}: {row['requests']} requests, {row['server_errors']} 5xx, "
            f"{row['refused_4xx']} 4xx, {row['no_answer']} unanswered, p50 {row['p50_ms']} ms, "
            f"p95 {row['p95_ms']} ms, {row['per_s']}/s"
        )
    (args.output_dir / "load.md").write_text(render(results))


if __name__ == "__main__":
    main()
