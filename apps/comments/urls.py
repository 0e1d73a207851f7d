from django.urls import path

from apps.comments import views

app_name = "comments"
urlpatterns = [
    path("comments/<slug:kind>/<int:pk>/", views.thread, name="thread"),
    path("comments/<slug:kind>/<int:pk>/read/", views.mark_read, name="read"),
    path("comments/<int:pk>/", views.comment_detail, name="comment"),
]
