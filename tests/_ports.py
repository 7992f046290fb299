"""A free TCP port for a server a test starts."""

import socket


def free_port() -> int:
    """A port the OS reports free on 127.0.0.1, chosen by the OS.

    Never a fixed range: suites running side by side (several checkouts, CI) would probe the same
    ports, and one test's requests could reach another test's server.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
