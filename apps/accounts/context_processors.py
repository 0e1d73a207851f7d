from apps.core.roles import Role


def roles(request) -> dict:
    """The signed-in user's role names, as people read them."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"user_roles": []}
    labels = dict(Role.choices)
    return {"user_roles": [str(labels.get(g.name, g.name)) for g in user.groups.all()]}
