from django.urls import path

from apps.packets import views

app_name = "packets"
urlpatterns = [
    path("cases/<int:pk>/packets/", views.packet_list, name="list"),
    path("cases/<int:pk>/packets/new/", views.packet_request, name="request"),
    path("packets/requests/<int:pk>/", views.packet_status, name="status"),
    path("packets/<int:pk>/download/", views.packet_download, name="download"),
    path("packets/verify/", views.packet_verify, name="verify"),
]
