def configure(name: str, **options: str) -> None:
    """Configure a thing."""
