from django.urls import path

from apps.sizing import views

app_name = "sizing"
urlpatterns = [
    path("sizing/", views.calculator, name="calculator"),
    path("sizing/requirement/<int:case_pk>/", views.requirement, name="requirement"),
]
