from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ScorecardsConfig(AppConfig):
    name = "apps.scorecards"
    label = "scorecards"
    verbose_name = _("Scorecards")
