"""Undecorated tools with reST (Sphinx) docstrings."""


def create_user(username: str, email: str, admin: bool = False) -> dict:
    """Create a user account.

    :param username: The login name.
    :param str email: Where to write to.
    :param admin: Whether the user may manage others.
    :returns: the new account.
    """
    return {"username": username}


def delete_user(username: str) -> None:
    """Delete a user account.

    :param username: The login name.
    """
