from django.urls import path

from apps.portal import views

app_name = "portal"
urlpatterns = [
    # --- The vendor's side: every path starts with the invitation's link secret. ---
    path("portal/<str:token>/", views.start, name="start"),
    path("portal/<str:token>/answers/", views.home, name="home"),
    path("portal/<str:token>/sign-out/", views.sign_out, name="sign_out"),
    # --- The organisation's side: invitations and the review of what vendors proposed. ---
]
