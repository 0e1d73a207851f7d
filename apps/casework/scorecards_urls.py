"""The scoring pages, under one name (``scorecards:``); the offer matrix sets every
offer of a case side by side, with what each app records about it."""

from django.urls import path

from apps.casework import views
from apps.scorecards import views as scorecard_views

app_name = "scorecards"
urlpatterns = [
    path("cases/<int:pk>/comparison/", scorecard_views.comparison, name="comparison"),
    path("cases/<int:pk>/matrix/", views.matrix, name="matrix"),
    path("cases/<int:pk>/criteria/", scorecard_views.criteria_edit, name="criteria"),
    # Each workload kind's criteria preset, published as versions (administrators).
    path("criteria-presets/", scorecard_views.presets, name="presets"),
    path(
        "criteria-presets/<slug:workload>/new/",
        scorecard_views.preset_publish,
        name="preset-publish",
    ),
    path("offers/<int:offer_pk>/scorecard/", scorecard_views.scorecard_edit, name="scorecard"),
    path(
        "offers/<int:offer_pk>/scorecard/workbook/",
        scorecard_views.scorecard_workbook_download,
        name="scorecard-workbook",
    ),
    path(
        "offers/<int:offer_pk>/scorecard/import/",
        scorecard_views.scorecard_import,
        name="scorecard-import",
    ),
]
