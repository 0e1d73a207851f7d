from django.apps import AppConfig


class PacketsConfig(AppConfig):
    name = "apps.packets"
    label = "packets"
