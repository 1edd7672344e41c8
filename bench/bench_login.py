"""What a log-in costs the server, with Argon2 (the setting) against Django's PBKDF2 default.

The whole POST /accounts/login/ as the server handles it, in-process (the log-in form, the
lockout check, the password check, the session), for one user whose password was hashed with
each hasher. Each side is timed in turns, median of 7 log-ins. The password hasher's own cost
(one `check_password`) is printed beside it, so what is left is the rest of the request.

Run: .venv/bin/python bench/bench_login.py
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

setup_django()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.hashers import check_password, make_password  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

PASSWORD = "correct horse battery staple"
ROUNDS = 7
ARGON2 = "django.contrib.auth.hashers.Argon2PasswordHasher"
PBKDF2 = "django.contrib.auth.hashers.PBKDF2PasswordHasher"


def login_seconds(username: str) -> float:
    client = Client(HTTP_HOST="localhost")
    start = time.perf_counter()
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    elapsed = time.perf_counter() - start
    if response.status_code != 302:
        raise SystemExit(f"log-in of {username} answered {response.status_code}, not a redirect")
    return elapsed


def main() -> None:
    users = get_user_model().objects
    hashers = {"argon2": [ARGON2], "pbkdf2": [PBKDF2]}
    encoded = {}
    for name, chosen in hashers.items():
        with override_settings(PASSWORD_HASHERS=chosen):
            encoded[name] = make_password(PASSWORD)
            users.filter(username=name).delete()
            users.create(username=name, password=encoded[name])
    times: dict[str, list[float]] = {name: [] for name in hashers}
    checks: dict[str, list[float]] = {name: [] for name in hashers}
    for _ in range(ROUNDS):
        for name, chosen in hashers.items():
            # Each side keeps its own hasher first, so a log-in never rehashes the password.
            with override_settings(PASSWORD_HASHERS=chosen):
                times[name].append(login_seconds(name))
                start = time.perf_counter()
                check_password(PASSWORD, encoded[name])
                checks[name].append(time.perf_counter() - start)
    for name in hashers:
        login, check = statistics.median(times[name]), statistics.median(checks[name])
        print(
            f"{name:7s} log-in {login * 1000:6.0f} ms of server time, of which the password check {check * 1000:6.0f} ms"
        )
    ratio = statistics.median(times["pbkdf2"]) / statistics.median(times["argon2"])
    print(f"Argon2 log-in is {ratio:.1f}x faster than PBKDF2's")


if __name__ == "__main__":
    main()
