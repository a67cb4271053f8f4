from dataclasses import dataclass


@dataclass
class Job:
    name: str
    retries: list[complex]


def schedule(job: Job) -> None:
    """Schedule a job."""
