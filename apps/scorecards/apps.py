from django.apps import AppConfig


class ScorecardsConfig(AppConfig):
    name = "apps.scorecards"
    label = "scorecards"
