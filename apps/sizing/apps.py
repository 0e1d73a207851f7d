from django.apps import AppConfig


class SizingConfig(AppConfig):
    name = "apps.sizing"
    label = "sizing"
