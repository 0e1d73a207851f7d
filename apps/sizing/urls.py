from django.urls import path

from apps.sizing import views

app_name = "sizing"
urlpatterns = [path("sizing/", views.calculator, name="calculator")]
