from apps.core.roles import Role


def roles(request) -> dict:
    """The signed-in user's role names, as people read them, and the roles they hold."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"user_roles": [], "user_role_keys": frozenset()}
    labels = dict(Role.choices)
    names = [group.name for group in user.groups.all()]
    if user.is_superuser and Role.ADMIN not in names:
        names.insert(0, Role.ADMIN)  # a superuser is an administrator, in a group or not
    return {
        "user_roles": [str(labels.get(name, name)) for name in names],
        # The roles held, by their stored names, for links open to some roles only.
        "user_role_keys": frozenset(name for name in names if name in Role.values),
    }
