from django.urls import path

from apps.accounts import views

app_name = "accounts"
urlpatterns = [
    path("accounts/two-factor/", views.two_factor, name="two_factor"),
    path("accounts/two-factor/verify/", views.two_factor_verify, name="two_factor_verify"),
    path("accounts/notifications/", views.notifications, name="notifications"),
]
