from django.urls import path

from apps.accounts import people_views, scim, views

app_name = "accounts"
urlpatterns = [
    path("accounts/two-factor/", views.two_factor, name="two_factor"),
    path("accounts/two-factor/verify/", views.two_factor_verify, name="two_factor_verify"),
    path("accounts/notifications/", views.notifications, name="notifications"),
    # The invitee's own page, opened from the e-mail (public: the link's secret is the key).
    path(
        "accounts/invitation/<str:secret>/",
        people_views.invitation_accept,
        name="invitation",
    ),
    # Administration: administrators only.
    path("people/", people_views.people_list, name="people"),
    path("people/invite/", people_views.invite, name="invite"),
    path("people/invitations/", people_views.invitations, name="invitations"),
    path(
        "people/invitations/<int:pk>/withdraw/",
        people_views.invitation_withdraw,
        name="invitation_withdraw",
    ),
    path("people/provisioning/", people_views.provisioning, name="provisioning"),
    path(
        "people/provisioning/<int:pk>/revoke/",
        people_views.provisioning_revoke,
        name="provisioning_revoke",
    ),
    path("people/<int:pk>/", people_views.person, name="person"),
    path("people/<int:pk>/roles/", people_views.person_roles, name="person_roles"),
    path("people/<int:pk>/deactivate/", people_views.person_deactivate, name="person_deactivate"),
    path("people/<int:pk>/reactivate/", people_views.person_reactivate, name="person_reactivate"),
    # SCIM 2.0 provisioning for the identity provider (bearer token; no trailing slash, as
    # SCIM clients request them).
    path("scim/v2/Users", scim.users, name="scim_users"),
    path("scim/v2/Users/<str:scim_user_id>", scim.user, name="scim_user"),
    path("scim/v2/Groups", scim.groups, name="scim_groups"),
    path("scim/v2/Groups/<str:scim_group_id>", scim.group, name="scim_group"),
    path(
        "scim/v2/ServiceProviderConfig",
        scim.service_provider_config,
        name="scim_service_provider_config",
    ),
    path("scim/v2/ResourceTypes", scim.resource_types, name="scim_resource_types"),
    path("scim/v2/Schemas", scim.schemas, name="scim_schemas"),
]
