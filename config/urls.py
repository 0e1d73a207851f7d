from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.accounts.sso import SignInCallback, SignInRequest, SignInView
from apps.core.views import healthz

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="cases:list"), name="home"),
    path("healthz", healthz, name="healthz"),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("oidc/authenticate/", SignInRequest.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", SignInCallback.as_view(), name="oidc_authentication_callback"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("apps.accounts.urls")),
    path("admin/", admin.site.urls),
    # Django's set_language: public on purpose (the login page offers it too).
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file, and our template links its page
    # rules as a stylesheet: no inline script or style (CSP).
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="core/api_docs.html"
        ),
        name="api-docs",
    ),
    path("api/v1/", include("config.api_urls")),
    # Every app's pages, mounted alike: each app's urls.py spells out its own paths.
    path("", include("apps.casework.urls")),
    path("", include("apps.casework.vendors_urls")),
    path("", include("apps.casework.offers_urls")),
    path("", include("apps.sizing.urls")),
    path("", include("apps.casework.scorecards_urls")),
    path("", include("apps.contracts.urls")),
    path("", include("apps.casework.assessments_urls")),
    path("", include("apps.casework.access_urls")),
    path("", include("apps.evidence.urls")),
    path("", include("apps.packets.urls")),
    path("", include("apps.audit.urls")),
    path("", include("apps.casework.approvals_urls")),
    path("", include("apps.costs.urls")),
    path("", include("apps.acceptance.urls")),
    path("", include("apps.comments.urls")),
    path("", include("apps.workloads.urls")),
    path("", include("apps.portal.urls")),
]

# A 403 page says which roles may open the page; 404 and 500 use their templates.
handler403 = "apps.core.views.permission_denied"

# Stored files (evidence, packets, bills, attachments) are never served from the
# storage folder, not even with DEBUG on: each leaves through its app's download view,
# which checks the reader's permission and the file's recorded SHA-256
# (apps.core.downloads).
