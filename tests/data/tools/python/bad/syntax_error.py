def fine(x: int) -> int:
    return x


def broken(x: int) -> int
    return x
