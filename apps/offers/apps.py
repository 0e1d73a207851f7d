from django.apps import AppConfig


class OffersConfig(AppConfig):
    name = "apps.offers"
    label = "offers"
