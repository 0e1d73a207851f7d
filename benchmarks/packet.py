"""Does a signed packet scale with the case, not with its history?

Builds a case in a throw-away SQLite database through the same services as
the application (offers with declared specs, two reviewers' scorecards), then
lengthens its history to each size asked for (default 1,000, 10,000 and
100,000 rows): revisions of the score entries, written in bulk and linked into
the audit chain as the application links them, so the attached history files
carry real chain entries. At each size, in a fresh Python process (its peak
memory its own):

- **full**: the whole issue (gather, write the history files, lay out the
  chapters, join, embed, sign, hash, store), phase by phase, with the
  worker's peak RSS and that of its layout processes, pages and file size;

and at the smallest and the largest size:

- the same issue with parallel layout off (``PACKET_RENDER_PROCESSES=1``), for
  the parallel / single-process ratio of wall time (target ≤ 0.65 on 2 cores,
  read at the largest size);
- **weasyprint**: WeasyPrint alone laying out and writing the very same parts
  (every chapter, the cover, contents and page numbers) one after the other,
  for the overhead of gathering, signing and storing over it, on CPU time
  (target ≤ 25 %); the history files' own CPU time is measured and shown
  apart, and the overhead of everything beside it.

Targets: at 100,000 rows the wall time and the worker's peak RSS within 1.5×
of those at 1,000. The gathering's queries are counted at each size: they must
not change.

    python benchmarks/packet.py                 # the full run; writes benchmarks/results/packet.md
    python benchmarks/packet.py --quick         # small sizes, end to end; prints, writes nothing

Run the full one on a machine with nothing else busy: wall times and the
parallel ratio mean little when other work competes for the cores.
"""

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
TARGET_GROWTH = 1.5
TARGET_PARALLEL = 0.65
TARGET_OVERHEAD = 0.25
FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (400, 800, 1_600)
BATCH = 5_000
REPEATS = 2


def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu_model": model.group(1).strip() if model else platform.processor(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _setup_django(workdir: Path) -> None:
    os.environ["DILIGENCE_VAR_DIR"] = str(workdir)
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import logging

    import django

    django.setup()
    # WeasyPrint narrates every layout step at INFO; the numbers are what matter here.
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("celery").setLevel(logging.WARNING)


def _peak_rss_mib(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# --- building the case (parent process) ---------------------------------------------


def build_case(offers: int):
    from decimal import Decimal

    from django.core.management import call_command

    from apps.cases.services import case_create
    from apps.casework.demo import DEMO_DEMAND, seed_users
    from apps.offers.services import declared_spec_update, offer_create
    from apps.scorecards.scoring import DEFAULT_CRITERIA
    from apps.scorecards.services import scorecard_save
    from apps.sizing.services import compute_demand_save
    from apps.vendors.services import vendor_create

    call_command("migrate", verbosity=0)
    users = seed_users()
    priya, tariq = users["priya"], users["tariq"]
    case = case_create(actor=priya, name="华东推理集群采购 — benchmark case", workload="inference")
    compute_demand_save(actor=tariq, case=case, fields=DEMO_DEMAND)
    keys = [c.key for c in DEFAULT_CRITERIA]
    for n in range(offers):
        vendor = vendor_create(actor=priya, name=f"Vendor {n:02d} 算力云", jurisdiction="Singapore")
        offer = offer_create(
            actor=priya,
            case=case,
            vendor=vendor,
            accelerator_model="NVIDIA H200 SXM 141GB",
            accelerator_count=64,
            unit_price=Decimal("3.10") + Decimal(n) / 100,
            billing_basis="per_hour",
            prepayment_ratio=Decimal("0.3"),
            contract_term_months=12,
        )
        declared_spec_update(
            actor=tariq,
            spec=offer.declared_spec,
            fields={
                "memory_per_card_gib": Decimal("140.4"),
                "cards_per_node": 8,
                "intra_node_interconnect": "nvlink",
                "intra_node_bandwidth_gbps": Decimal("900"),
                "inter_node_network": "infiniband",
                "inter_node_bandwidth_gbit": Decimal("3200"),
                "local_nvme_tb": Decimal("30.72"),
                "driver_version": "550.127.05" if n % 4 else "",
                "cuda_version": "12.4",
                "runtime_versions": "vLLM 0.6.4",
            },
            reason="Transcribed from the vendor's written spec",
        )
        for position, reviewer in enumerate((priya, tariq)):
            scorecard_save(
                actor=reviewer,
                offer=offer,
                scores={
                    key: {"score": (n + i + position) % 6, "comment": "第1轮评审"}
                    for i, key in enumerate(keys)
                },
                reason="Review round 1",
            )
    return case


def history_size(case) -> int:
    from apps.audit.sources import case_history_querysets

    return sum(qs.count() for qs in case_history_querysets(case))


def grow_history(case, target: int) -> None:
    """Revisions of the case's score entries until its history has ``target`` rows.

    Written in bulk, then linked into the audit chain exactly as
    ``apps.audit.chain`` links a row (digest of the stored row, link hash).
    """
    from datetime import timedelta

    from django.contrib.contenttypes.models import ContentType
    from django.db import transaction
    from django.utils import timezone

    from apps.audit.chain import HEAD_PK, late_columns, link_hash, row_digest, row_fields
    from apps.audit.models import ChainEntry, ChainHead
    from apps.scorecards.models import ScoreEntry

    history = ScoreEntry.history.model
    templates = list(
        history.objects.filter(scorecard__offer__case=case, history_type="+").order_by("history_id")
    )
    columns = [f.attname for f in history._meta.concrete_fields if f.attname != "history_id"]
    fields, late = row_fields(history), late_columns(history)
    content_type = ContentType.objects.get_for_model(history, for_concrete_model=False)
    table = f"{content_type.app_label}.{content_type.model}"
    missing, n, when = target - history_size(case), 0, timezone.now()
    while missing > 0:
        batch = []
        for _ in range(min(BATCH, missing)):
            base = templates[n % len(templates)]
            values = {name: getattr(base, name) for name in columns}
            values.update(
                history_type="~",
                history_date=when + timedelta(milliseconds=n),
                history_change_reason=f"Review round {n // len(templates) + 2}",
                score=(n * 7) % 6,
                comment=f"round {n // len(templates) + 2}: 第{n % 97}条意见",
            )
            batch.append(history(**values))
            n += 1
        with transaction.atomic():
            created = history.objects.bulk_create(batch)
            ids = [row.pk for row in created]
            stored = history.objects.filter(pk__in=ids).order_by("history_id").values(*fields)
            head = ChainHead.objects.select_for_update().get(pk=HEAD_PK)
            entries = []
            for values in stored:
                digest = row_digest(values, late=late)
                seq = head.seq + 1
                entry_hash = link_hash(
                    prev_hash=head.entry_hash,
                    row_digest=digest,
                    table=table,
                    history_id=values["history_id"],
                    seq=seq,
                )
                entries.append(
                    ChainEntry(
                        seq=seq,
                        content_type=content_type,
                        history_id=values["history_id"],
                        row_digest=digest,
                        prev_hash=head.entry_hash,
                        entry_hash=entry_hash,
                    )
                )
                head.seq, head.entry_hash = seq, entry_hash
            ChainEntry.objects.bulk_create(entries, batch_size=1000)
            head.save(update_fields=["seq", "entry_hash"])
        missing -= len(batch)


def gathering_queries(case) -> tuple[int, float]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from apps.packets.document import packet_document
    from apps.packets.signing import get_signer

    signer = get_signer()
    connection.queries_log.clear()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir, CaptureQueriesContext(connection) as queries:
        packet_document(
            case,
            number="DIL-0000-000000",
            requested_by=case.owner,
            packet_signer=signer,
            generated_at=timezone.now(),
            workdir=Path(workdir),
        )
    return len(queries), time.perf_counter() - started


# --- measured children --------------------------------------------------------------


def child_full(case_pk: int, processes: int, parts_out: Path) -> dict:
    """The real issue, phase by phase: the same calls ``packet_issue`` makes."""
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    import apps.packets.rendering as rendering
    import apps.packets.services as services
    from apps.cases.models import ProcurementCase
    from apps.packets.document import PacketDocument

    settings.PACKET_RENDER_PROCESSES = processes
    case = ProcurementCase.objects.get(pk=case_pk)
    phases: dict[str, float] = {}
    kept: dict = {}

    def timed(name, function):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

        return wrapper

    def document_and_keep(*args, **kwargs):
        document = original_document(*args, **kwargs)
        kept["document"] = document
        return document

    original_document = services.packet_document
    services.packet_document = timed("gather", document_and_keep)
    # The history files are written while the chapters are laid out, so within this phase.
    rendering.render_packet = timed(
        "lay out, write the history files, join", rendering.render_packet
    )
    services.sign_pdf = timed("embed and sign", services.sign_pdf)
    services._store = timed("store", services._store)
    # The history files' own cost, apart: written by this process (while the chapters are
    # laid out in the others, or between them in one process), on its CPU clock.
    original_write = PacketDocument.write_attachments

    def write_timed(self, *args, **kwargs):
        started = time.process_time()
        try:
            return original_write(self, *args, **kwargs)
        finally:
            kept["history_files_cpu"] = time.process_time() - started

    PacketDocument.write_attachments = write_timed
    rendering.warm_up()  # fonts and stylesheets loaded, as in a worker that rendered before
    request = services.packet_request_create(actor=case.owner, case=case, queue=False)
    load = os.getloadavg()[0]
    connection.queries_log.clear()
    started, cpu_started = time.perf_counter(), _cpu_seconds()
    with CaptureQueriesContext(connection) as queries:
        packet = services.packet_issue(packet_request=request)
    total = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_started
    document = kept["document"]
    request.refresh_from_db()
    chapter_pages = [chapter["pages"] for chapter in request.chapters]
    front_pages = packet.page_count - sum(chapter_pages)
    starts, page = [], front_pages + 1
    for pages in chapter_pages:
        starts.append(page)
        page += pages
    parts = [chapter.html for chapter in document.chapters]
    parts.append(document.front_html(starts, packet.page_count))
    parts_out.write_text(json.dumps(parts), encoding="utf-8")
    return {
        "processes": rendering.render_processes(),
        "seconds": total,
        "cpu_seconds": cpu,
        "history_files_cpu_seconds": kept["history_files_cpu"],
        "phases": phases,
        "queries": len(queries),
        "pages": packet.page_count,
        "size_bytes": packet.size_bytes,
        "attached_bytes": sum(a.size for a in document.attachments),
        "peak_rss_mib": _peak_rss_mib(),
        "peak_rss_layout_mib": _peak_rss_mib(resource.RUSAGE_CHILDREN),
        "load_average": load,
    }


def child_weasyprint(parts_path: Path) -> dict:
    from weasyprint import HTML

    from apps.packets.rendering import BASE_URL, StaticOnlyFetcher, warm_up

    parts = json.loads(parts_path.read_text(encoding="utf-8"))
    warm_up()
    pages = 0
    with tempfile.TemporaryDirectory() as workdir:
        started, cpu_started = time.perf_counter(), _cpu_seconds()
        for n, html in enumerate(parts):
            document = HTML(
                string=html, base_url=BASE_URL, url_fetcher=StaticOnlyFetcher()
            ).render()
            document.write_pdf(Path(workdir) / f"part-{n}.pdf", pdf_tags=True)  # as the packet
            pages += len(document.pages)
        seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_started
    return {"seconds": seconds, "cpu_seconds": cpu, "pages": pages, "peak_rss_mib": _peak_rss_mib()}


def run_child(mode: str, workdir: Path, *arguments: str) -> dict:
    completed = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--workdir", str(workdir), *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if completed.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{completed.stderr[-4000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


# --- report -------------------------------------------------------------------------


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def report_text(report: dict) -> str:
    m = report["machine"]
    sizes = report["sizes"]
    small, large = sizes[0], sizes[-1]
    wall_growth = large["full"]["seconds"] / small["full"]["seconds"]
    rss_growth = large["full"]["peak_rss_mib"] / small["full"]["peak_rss_mib"]
    parallel, single = large["full"], large["single"]
    ratio = parallel["seconds"] / single["seconds"]
    lines = [
        "# Signed audit packet: a case's packet as its history grows",
        "",
        f"Produced by `python benchmarks/packet.py{' --quick' if report['quick'] else ''}`.",
        "",
        f"- Machine: {m['cores']} cores ({m['usable_cores']} usable), {m['cpu_model']}, "
        f"{m['implementation']} {m['python']}, {m['os']}; load average at start "
        f"{m['load_average_at_start']}.",
        f"- Case: {report['offers']} offers with declared specs, two reviewers' scorecards; "
        "its history lengthened with revisions of the scores, chained as the application "
        "chains them.",
        "- Each measurement in a fresh Python process, warmed first (fonts, stylesheets), as "
        "a worker that has issued a packet before is. At the smallest and the largest size "
        f"each measurement runs {REPEATS} times, parallel and one process in pairs (the machine "
        "is a virtual one on a shared host, where one run's times vary by a tenth or more); "
        "the fastest is shown: the least wall time for wall-time comparisons, the least CPU "
        "time for the overhead.",
        "",
        "## The history grows, the packet does not",
        "",
        "| history rows | wall time | CPU time | worker peak RSS | layout processes' peak RSS "
        "| pages | PDF size | attached history | queries to gather |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        full = size["full"]
        lines.append(
            f"| {size['history_rows']:,} | {full['seconds']:.1f} s | {full['cpu_seconds']:.1f} s "
            f"| {full['peak_rss_mib']:.0f} MiB | {full['peak_rss_layout_mib']:.0f} MiB "
            f"| {full['pages']} | {full['size_bytes'] / 1024 / 1024:.1f} MiB "
            f"| {full['attached_bytes'] / 1024 / 1024:.1f} MiB | {size['gathering_queries']} |"
        )
    lines += [
        "",
        f"At {large['history_rows']:,} rows against {small['history_rows']:,}: wall time "
        f"×{wall_growth:.2f}, worker peak RSS ×{rss_growth:.2f} (target ≤ ×{TARGET_GROWTH}: "
        f"{_verdict(wall_growth <= TARGET_GROWTH and rss_growth <= TARGET_GROWTH)}).",
        "",
        "Phases at the largest size (wall time): "
        + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in large["full"]["phases"].items())
        + ".",
        "",
        f"## Parallel layout, {large['history_rows']:,} rows",
        "",
        "| layout | wall time | CPU time (all processes) | pages |",
        "|---|---:|---:|---:|",
        f"| {parallel['processes']} processes | {parallel['seconds']:.1f} s "
        f"| {parallel['cpu_seconds']:.1f} s | {parallel['pages']} |",
        f"| one process (`PACKET_RENDER_PROCESSES=1`) | {single['seconds']:.1f} s "
        f"| {single['cpu_seconds']:.1f} s | {single['pages']} |",
        "",
        f"Parallel ÷ one process, wall time (the fastest of each): {ratio:.2f} "
        f"(target ≤ {TARGET_PARALLEL} on 2 cores: {_verdict(ratio <= TARGET_PARALLEL)}).",
        "",
        "Each pair, run one right after the other (the machine's load average over the minute "
        "before each run):",
        "",
        "| pair | 2 processes | one process | parallel ÷ one process |",
        "|---:|---:|---:|---:|",
        *(
            f"| {n} | {pair['parallel']['seconds']:.1f} s "
            f"(load {pair['parallel']['load_average']:.2f}) "
            f"| {pair['single']['seconds']:.1f} s (load {pair['single']['load_average']:.2f}) "
            f"| {pair['parallel']['seconds'] / pair['single']['seconds']:.2f} |"
            for n, pair in enumerate(large["pairs"], start=1)
        ),
        "",
        "Each run issues a packet, which the next one's history holds (a request and a packet "
        "more), and which may add a page.",
        "",
        "## Overhead over WeasyPrint alone",
        "",
        "WeasyPrint alone lays out and writes the same parts (each chapter; the cover, contents "
        "and page numbers) one after the other; the whole issue runs in one process "
        "(`PACKET_RENDER_PROCESSES=1`). Both on CPU time, which other work on the machine "
        "disturbs less than wall time.",
        "",
        "- **Gathering, signing and storing** (the target): (whole issue − the history files − "
        "WeasyPrint alone) ÷ WeasyPrint alone. It covers gathering, the summary, joining, "
        "embedding, signing, hashing, storing and the progress updates.",
        "- **The history files** (every history row, as CSV and as JSON, hashed and compressed "
        "for embedding) are new work the packet does, measured on their own: the one part "
        "that grows with the history. In a worker with two or more processes they are written "
        "while the chapters are laid out, so they add to CPU time but little to wall time "
        "(the parallel table above).",
        "- **Everything**: (whole issue − WeasyPrint alone) ÷ WeasyPrint alone.",
        "",
        "| history rows | WeasyPrint alone | whole issue, one process | history files "
        "| gathering, signing, storing | everything |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for size in (small, large):
        plain, whole = size["weasyprint"], size["single_cpu"]
        files = whole["history_files_cpu_seconds"]
        overhead = (whole["cpu_seconds"] - files - plain["cpu_seconds"]) / plain["cpu_seconds"]
        everything = (whole["cpu_seconds"] - plain["cpu_seconds"]) / plain["cpu_seconds"]
        lines.append(
            f"| {size['history_rows']:,} | {plain['cpu_seconds']:.1f} s "
            f"| {whole['cpu_seconds']:.1f} s | {files:.1f} s "
            f"| **{overhead * 100:.1f} %** "
            f"(target ≤ {TARGET_OVERHEAD * 100:.0f} %: {_verdict(overhead <= TARGET_OVERHEAD)}) "
            f"| {everything * 100:.1f} % |"
        )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--offers", type=int, default=None)
    parser.add_argument(
        "--sizes",
        default=None,
        help="history rows to measure, comma-separated (default 1000,10000,100000)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, end to end; prints the report only"
    )
    parser.add_argument("--child", choices=["full", "weasyprint"])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("arguments", nargs="*")
    args = parser.parse_args()

    if args.child:
        _setup_django(args.workdir)
        if args.child == "full":
            case_pk, processes, parts = args.arguments
            result = child_full(int(case_pk), int(processes), Path(parts))
        else:
            result = child_weasyprint(Path(args.arguments[0]))
        print(json.dumps(result))
        return

    offers = args.offers or (4 if args.quick else 24)
    sizes = (
        [int(size) for size in args.sizes.split(",")]
        if args.sizes
        else list(QUICK_SIZES if args.quick else FULL_SIZES)
    )
    report: dict = {"machine": machine(), "quick": args.quick, "offers": offers, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="packet-bench-") as tmp:
        workdir = Path(tmp)
        _setup_django(workdir)
        started = time.perf_counter()
        case = build_case(offers)
        print(f"built the case in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        parts = workdir / "parts.json"
        sizes = sorted(sizes)
        for size in sizes:
            if history_size(case) > size:
                raise SystemExit(f"The case already has more than {size} history rows.")
            grow_history(case, size)
            rows = history_size(case)
            measured = {"history_rows": rows}
            ends = size in (sizes[0], sizes[-1])
            if ends:
                # In pairs, one right after the other: parallel layout, one process, then
                # WeasyPrint alone on the very parts it laid out. Repeated; the fastest run
                # kept for each measure, and every pair shown: on a shared host one run's
                # times vary by a tenth or more.
                fulls, singles, plains = [], [], []
                for _ in range(REPEATS):
                    fulls.append(run_child("full", workdir, str(case.pk), "0", str(parts)))
                    singles.append(run_child("full", workdir, str(case.pk), "1", str(parts)))
                    plains.append(run_child("weasyprint", workdir, str(parts)))
                measured["pairs"] = [
                    {"parallel": full, "single": single}
                    for full, single in zip(fulls, singles, strict=True)
                ]
                measured["single"] = min(singles, key=lambda run: run["seconds"])
                measured["single_cpu"] = min(singles, key=lambda run: run["cpu_seconds"])
                measured["weasyprint"] = min(plains, key=lambda run: run["cpu_seconds"])
            else:
                fulls = [run_child("full", workdir, str(case.pk), "0", str(parts))]
            measured["full"] = min(fulls, key=lambda run: run["seconds"])
            # Counted once a packet exists at every size (its request and record are history too).
            measured["gathering_queries"] = gathering_queries(case)[0]
            report["sizes"].append(measured)
            print(f"{size} rows: {measured}", file=sys.stderr)
    text = report_text(report)
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "packet.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
