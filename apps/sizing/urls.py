from django.urls import path

from apps.sizing import views

app_name = "sizing"
urlpatterns = [path("", views.calculator, name="calculator")]
