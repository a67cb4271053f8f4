class Config:
    def __init__(self, depth: int) -> None:
        self.depth = depth


def run(config: Config) -> None:
    """Run with a configuration."""
