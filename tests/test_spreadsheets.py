"""Records as XLSX both ways: downloaded, filled in offline, uploaded back.

Through HTTP: the workbook is downloaded with the test client, edited with
openpyxl as a reviewer's spreadsheet program would, and uploaded on the edit
page. Malformed workbooks are built here, each refused with the cell at fault
and nothing stored.
"""

import copy
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import translation
from openpyxl import load_workbook

from apps.access.models import AccessMatrix
from apps.assessments.models import AssessmentAnswer, DataExportAssessment
from apps.assessments.questions import QUESTIONS, Kind
from apps.contracts.models import ChecklistItem, ClauseChecklist
from apps.contracts.spreadsheet import checklist_workbook
from apps.core.spreadsheets import META_SHEET, XLSX_CONTENT_TYPE
from apps.scorecards.models import CriteriaSet, Scorecard, ScoreEntry
from apps.scorecards.scoring import DEFAULT_CRITERIA
from tests.access.factories import make_matrix
from tests.assessments.factories import make_assessment
from tests.contracts.factories import make_checklist, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
SCORERS = {"priya", "tariq", "ada"}
LEGAL = {"lena", "ada"}

TRACKED = (
    CriteriaSet,
    Scorecard,
    ScoreEntry,
    ClauseChecklist,
    ChecklistItem,
    DataExportAssessment,
    AssessmentAnswer,
)


def history_rows() -> int:
    return sum(model.history.model.objects.count() for model in TRACKED)


@pytest.fixture(scope="module")
def _world(module_people):
    priya, lena, tariq = (module_people[name] for name in ("priya", "lena", "tariq"))
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    checklist = make_checklist(lena, offer=offer)
    assessment = make_assessment(lena, case, complete=False)
    make_matrix(tariq, case, reason="Set up")
    return {"case": case, "offer": offer, "checklist": checklist, "assessment": assessment}


@pytest.fixture
def world(_world, people):
    """A case, an offer with its checklist, an assessment and an access matrix, built once
    for the module; each test its copy."""
    return copy.deepcopy(_world)


def _download(client, url):
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == XLSX_CONTENT_TYPE
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return load_workbook(io.BytesIO(response.content))


def _bytes(book) -> bytes:
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _upload(client, url, content: bytes, name="filled.xlsx", content_type=XLSX_CONTENT_TYPE):
    upload = SimpleUploadedFile(name, content, content_type=content_type)
    return client.post(url, {"workbook": upload})


def _errors(response) -> str:
    return " ".join(str(e) for e in response.context["import_form"].errors["workbook"])


# ---------------------------------------------------------------- round trips


def test_scorecard_round_trip(browser_as, world, priya):
    client = browser_as("priya")
    offer = world["offer"]
    book = _download(client, reverse("scorecards:scorecard-workbook", args=[offer.pk]))
    sheet = book["Scorecard"]
    assert [c.value for c in sheet[1]] == [
        "Criterion key",
        "Criterion",
        "Weight (points)",
        "Score (0–5)",
        "Comment",
    ]
    assert sheet.freeze_panes == "B2" and sheet[1][0].font.bold
    assert sheet.print_title_rows == "$1:$1" and sheet.page_setup.fitToWidth == 1
    assert book[META_SHEET].sheet_state == "hidden"
    filled = {}
    for n, row in enumerate(sheet.iter_rows(min_row=2), start=0):
        row[3].value = n % 6
        row[4].value = f"Comment {n}" if n else None
        filled[row[0].value] = (n % 6, f"Comment {n}" if n else "")
    response = _upload(
        client, reverse("scorecards:scorecard-import", args=[offer.pk]), _bytes(book)
    )
    assert response.status_code == 302
    card = Scorecard.objects.get(offer=offer, reviewer=priya)
    assert {e.criterion_key: (e.score, e.comment) for e in card.entries.all()} == filled
    assert card.entries.first().history.first().history_change_reason == (
        "Imported from filled.xlsx"
    )
    # Exported again, the workbook shows what was imported.
    again = _download(client, reverse("scorecards:scorecard-workbook", args=[offer.pk]))
    assert {
        r[0]: (r[3], r[4] or "") for r in again["Scorecard"].iter_rows(min_row=2, values_only=True)
    } == filled


def test_checklist_round_trip_takes_labels_in_either_language(browser_as, world, lena):
    client = browser_as("lena")
    offer, checklist = world["offer"], world["checklist"]
    book = _download(client, reverse("contracts:checklist-workbook", args=[offer.pk]))
    sheet = book["Clause checklist"]
    assert sheet.page_setup.orientation == "landscape"
    (drop_down,) = sheet.data_validations.dataValidation  # the statuses offered in a list
    assert "D2" in str(drop_down.sqref) and drop_down.type == "list"
    rows = list(sheet.iter_rows(min_row=2))
    rows[0][3].value = "Acceptable"
    rows[0][4].value = "7.2"
    rows[0][5].value = "The provider shall…"
    rows[0][6].value = "Checked with counsel"
    rows[1][3].value = "缺失"  # "Missing", as the Chinese page labels it
    rows[2][3].value = "needs_negotiation"
    rows[2][4].value = 12  # typed as a number: taken as the text "12"
    response = _upload(client, reverse("contracts:checklist-import", args=[offer.pk]), _bytes(book))
    assert response.status_code == 302, _errors(response)
    items = list(checklist.items.order_by("number"))
    assert (items[0].status, items[0].clause_reference, items[0].excerpt, items[0].note) == (
        "acceptable",
        "7.2",
        "The provider shall…",
        "Checked with counsel",
    )
    assert items[1].status == "missing"
    assert (items[2].status, items[2].clause_reference) == ("needs_negotiation", "12")
    assert all(item.status == "" for item in items[3:])
    assert items[0].reviewer == lena
    assert items[0].history.first().history_change_reason == "Imported from filled.xlsx"


def test_checklist_exported_in_chinese_imports(browser_as, world):
    client = browser_as("lena")
    checklist = world["checklist"]
    with translation.override("zh-hans"):
        content, _name = checklist_workbook(checklist)
    book = load_workbook(io.BytesIO(content))
    sheet = book.worksheets[0]
    assert sheet.title != "Clause checklist"  # the Chinese sheet name
    next(sheet.iter_rows(min_row=2))[3].value = "可接受"
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    assert _upload(client, url, _bytes(book)).status_code == 302
    assert checklist.items.order_by("number").first().status == "acceptable"


def test_questionnaire_round_trip(browser_as, world):
    client = browser_as("lena")
    assessment = world["assessment"]
    book = _download(client, reverse("assessments:workbook", args=[assessment.pk]))
    sheet = book["Questionnaire"]
    expected = {}
    for row in sheet.iter_rows(min_row=2):
        question = next(q for q in QUESTIONS if q.key == row[0].value)
        value, number = "", None
        if question.kind == Kind.COUNT:
            number = 1200
        elif question.kind == Kind.CHOICE:
            value = question.options[0][0]
            row[3].value = str(question.options[0][1])  # the label, as shown
        else:
            value = "yes"
            row[3].value = "Yes"
        if question.kind == Kind.YES_NO_DAYS:
            number = 30
        row[4].value = number
        row[5].value = f"Note on {question.key}"
        expected[question.key] = (value, number, f"Note on {question.key}")
    response = _upload(client, reverse("assessments:import", args=[assessment.pk]), _bytes(book))
    assert response.status_code == 302
    got = {a.question_key: (a.value, a.number, a.note) for a in assessment.answers.all()}
    assert got == expected
    again = _download(client, reverse("assessments:workbook", args=[assessment.pk]))
    assert [r[5] for r in again["Questionnaire"].iter_rows(min_row=2, values_only=True)] == [
        expected[q.key][2] for q in QUESTIONS
    ]


def test_access_matrix_workbook(browser_as, world):
    client = browser_as("aude")
    book = _download(client, reverse("access:matrix_workbook", args=[world["case"].pk]))
    grid = book["Access matrix"]
    matrix = AccessMatrix.objects.get(case=world["case"])
    assert grid.max_row == 1 + matrix.roles.count()
    assert grid.max_column == 2 + matrix.permissions.count()
    assert any("✓" in str(c.value or "") for row in grid.iter_rows(min_row=2) for c in row)
    assert book["Controls"].max_row == 1 + matrix.controls.count()
    assert META_SHEET not in book.sheetnames  # read-only: nothing to import


# ---------------------------------------------------------------- refusals


def _checklist_book(client, world):
    url = reverse("contracts:checklist-workbook", args=[world["offer"].pk])
    return _download(client, url)


def _wrong_sheet(book):
    book["Clause checklist"].title = "Sheet1"


def _moved_column(book):
    sheet = book["Clause checklist"]
    sheet["D1"].value, sheet["E1"].value = sheet["E1"].value, sheet["D1"].value


def _unknown_item(book):
    book["Clause checklist"]["A3"].value = "no_such_item"


def _bad_status(book):
    book["Clause checklist"]["D2"].value = "Maybe later"


def _formula(book):
    book["Clause checklist"]["G4"].value = "=1+1"


MALFORMED_CHECKLISTS = [
    (_wrong_sheet, "The sheet Clause checklist is missing"),
    (_moved_column, "Sheet Clause checklist, cell D1"),
    (_unknown_item, "Sheet Clause checklist, cell A3"),
    (_bad_status, "Sheet Clause checklist, cell D2"),
    (_formula, "Sheet Clause checklist, cell G4"),
]


@pytest.mark.parametrize("spoil,message", MALFORMED_CHECKLISTS)
def test_malformed_checklist_refused_with_its_cell(browser_as, world, spoil, message):
    client = browser_as("lena")
    book = _checklist_book(client, world)
    for row in book["Clause checklist"].iter_rows(min_row=2):
        row[3].value = "Acceptable"  # a good change beside the bad one: still nothing stored
    spoil(book)
    before = history_rows()
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    response = _upload(client, url, _bytes(book))
    assert response.status_code == 400
    assert message in _errors(response)
    assert history_rows() == before
    assert not world["checklist"].items.exclude(status="").exists()


def test_service_refusal_placed_at_its_cell(browser_as, world):
    """A required item marked not applicable: the service's rule, shown at the status cell."""
    client = browser_as("lena")
    book = _checklist_book(client, world)
    required = world["checklist"].items.filter(required=True).order_by("number").last()
    sheet = book["Clause checklist"]
    row = next(r for r in sheet.iter_rows(min_row=2) if r[0].value == required.key)
    row[3].value = "Not applicable"
    before = history_rows()
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    response = _upload(client, url, _bytes(book))
    assert response.status_code == 400
    assert f"Sheet Clause checklist, cell D{row[0].row}" in _errors(response)
    assert history_rows() == before


@pytest.mark.parametrize(
    "value,cell",
    [("three", "D2"), (7, "D3"), (-1, "D4"), (True, "D2")],
    ids=["text", "too-high", "negative", "boolean"],
)
def test_bad_score_refused_with_its_cell(browser_as, world, value, cell):
    client = browser_as("priya")
    offer = world["offer"]
    book = _download(client, reverse("scorecards:scorecard-workbook", args=[offer.pk]))
    sheet = book["Scorecard"]
    for row in sheet.iter_rows(min_row=2):
        row[3].value = 3
    sheet[cell].value = value
    before = history_rows()
    response = _upload(
        client, reverse("scorecards:scorecard-import", args=[offer.pk]), _bytes(book)
    )
    assert response.status_code == 400
    assert f"Sheet Scorecard, cell {cell}" in _errors(response)
    assert history_rows() == before
    assert not Scorecard.objects.exists()


def test_missing_row_refused(browser_as, world):
    client = browser_as("priya")
    offer = world["offer"]
    book = _download(client, reverse("scorecards:scorecard-workbook", args=[offer.pk]))
    book["Scorecard"].delete_rows(2)
    response = _upload(
        client, reverse("scorecards:scorecard-import", args=[offer.pk]), _bytes(book)
    )
    assert response.status_code == 400
    assert DEFAULT_CRITERIA[0].key in _errors(response)
    assert not Scorecard.objects.exists()


def test_number_text_in_questionnaire_refused(browser_as, world):
    client = browser_as("lena")
    assessment = world["assessment"]
    book = _download(client, reverse("assessments:workbook", args=[assessment.pk]))
    sheet = book["Questionnaire"]
    row = next(r for r in sheet.iter_rows(min_row=2) if r[0].value == "exit_bounded_time")
    row[4].value = "a month"
    before = history_rows()
    response = _upload(client, reverse("assessments:import", args=[assessment.pk]), _bytes(book))
    assert response.status_code == 400
    assert f"Sheet Questionnaire, cell E{row[0].row}" in _errors(response)
    assert history_rows() == before


def _with_entry(content: bytes, name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w") as target:
        for entry in source.infolist():
            target.writestr(entry, source.read(entry.filename))
        target.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize(
    "kind", ["xlsm-name", "vba-project", "macro-content-type", "not-a-zip", "zip-not-xlsx"]
)
def test_unsafe_files_refused(browser_as, world, kind):
    client = browser_as("lena")
    content = _bytes(_checklist_book(client, world))
    name, content_type = "filled.xlsx", XLSX_CONTENT_TYPE
    if kind == "xlsm-name":
        name = "filled.xlsm"
    elif kind == "vba-project":
        content = _with_entry(content, "xl/vbaProject.bin", b"\x00" * 64)
    elif kind == "macro-content-type":
        content_type = "application/vnd.ms-excel.sheet.macroEnabled.12"
    elif kind == "not-a-zip":
        content = b'Vendor,Status\nAurora,=HYPERLINK("x")\n'
    else:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("hello.txt", "hi")
        content = out.getvalue()
    before = history_rows()
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    response = _upload(client, url, content, name=name, content_type=content_type)
    assert response.status_code == 400
    errors = _errors(response)
    if kind in ("not-a-zip", "zip-not-xlsx"):
        assert "not an XLSX workbook" in errors
    else:
        assert "Macro-enabled workbooks are refused" in errors
    assert history_rows() == before


def test_fifty_megabytes_refused_before_reading(browser_as, world):
    client = browser_as("lena")
    before = history_rows()
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    response = _upload(client, url, b"PK\x03\x04" + b"\x00" * (50 * 1024 * 1024))
    assert response.status_code == 413
    assert history_rows() == before


def test_stale_workbook_refused(browser_as, world, lena):
    client = browser_as("lena")
    book = _checklist_book(client, world)
    next(book["Clause checklist"].iter_rows(min_row=2))[3].value = "Acceptable"
    set_statuses(lena, world["checklist"], {"sla": "missing"}, reason="Meanwhile")
    before = history_rows()
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    response = _upload(client, url, _bytes(book))
    assert response.status_code == 409
    assert "exported from version" in _errors(response)
    assert history_rows() == before


def test_stale_scorecard_refused(browser_as, world, priya):
    from apps.scorecards.services import scorecard_save

    client = browser_as("priya")
    offer = world["offer"]
    book = _download(client, reverse("scorecards:scorecard-workbook", args=[offer.pk]))
    scorecard_save(actor=priya, offer=offer, scores={}, reason="Started elsewhere")
    before = history_rows()
    response = _upload(
        client, reverse("scorecards:scorecard-import", args=[offer.pk]), _bytes(book)
    )
    assert response.status_code == 409
    assert history_rows() == before


def test_another_reviewers_workbook_refused(browser_as, world, priya):
    from apps.scorecards.services import scorecard_save

    offer = world["offer"]
    scorecard_save(actor=priya, offer=offer, scores={}, reason="Scored")
    url = reverse("scorecards:scorecard-workbook", args=[offer.pk])
    client = browser_as("tariq")
    book = _download(client, f"{url}?reviewer={priya.pk}")
    response = _upload(
        client, reverse("scorecards:scorecard-import", args=[offer.pk]), _bytes(book)
    )
    assert response.status_code == 400
    assert "another record" in _errors(response)


def test_refused_import_shows_the_edit_page(browser_as, world):
    client = browser_as("lena")
    url = reverse("contracts:checklist-import", args=[world["offer"].pk])
    response = _upload(client, url, b"not a workbook")
    assert response.status_code == 400
    assert b"Import from a spreadsheet" in response.content
    assert b"Nothing was imported" in response.content


# ---------------------------------------------------------------- permissions

EXPORTS = [
    ("scorecards:scorecard-workbook", lambda w: [w["offer"].pk], EVERYONE),
    ("contracts:checklist-workbook", lambda w: [w["offer"].pk], EVERYONE),
    ("assessments:workbook", lambda w: [w["assessment"].pk], EVERYONE),
    ("access:matrix_workbook", lambda w: [w["case"].pk], EVERYONE),
]
IMPORTS = [
    ("scorecards:scorecard-import", lambda w: [w["offer"].pk], SCORERS),
    ("contracts:checklist-import", lambda w: [w["offer"].pk], LEGAL),
    ("assessments:import", lambda w: [w["assessment"].pk], LEGAL),
]


@pytest.mark.parametrize("name,args,allowed", EXPORTS, ids=[e[0] for e in EXPORTS])
@pytest.mark.parametrize("role", ROLES)
def test_export_permission(browser_as, world, name, args, allowed, role):
    response = browser_as(role).get(reverse(name, args=args(world)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,args,allowed", IMPORTS, ids=[i[0] for i in IMPORTS])
@pytest.mark.parametrize("role", ROLES)
def test_import_permission(browser_as, world, name, args, allowed, role):
    before = history_rows()
    upload = SimpleUploadedFile("x.xlsx", b"not a workbook", content_type=XLSX_CONTENT_TYPE)
    response = browser_as(role).post(reverse(name, args=args(world)), {"workbook": upload})
    assert response.status_code == (400 if role in allowed else 403)
    assert history_rows() == before


@pytest.mark.parametrize("name,args", [(e[0], e[1]) for e in EXPORTS + IMPORTS])
def test_anonymous_sent_to_sign_in(client, world, name, args):
    response = client.get(reverse(name, args=args(world)))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
