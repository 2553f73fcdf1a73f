"""``python -m simclock_conformance MODULE:FACTORY``: see ``simclock_conformance.entry._run.main``.

A closed stdout (``| head``) ends the run quietly with exit status 141
(128 + SIGPIPE, what a shell reports for ``cat``), not a traceback.
"""

import importlib.util
import os
import sys

# The suite runs on pytest and Hypothesis, the 'conformance' extra: without
# them, one line naming it (exit 2, a usage error), not an ImportError traceback,
# with the pip command that installs it from where this simclock came from.
_missing = [name for name in ("pytest", "hypothesis") if importlib.util.find_spec(name) is None]


def install_command(extra: str) -> str:
    """``pip install ...`` adding ``extra`` to this simclock, as written (no index has simclock).

    The directory or wheel pip installed simclock from (PEP 610's
    ``direct_url.json``), else ``/path/to/simclock`` for the user's clone. The
    same rule as ``simclock.core._extras.install_command``, which this package
    may not import (it talks to simclock through the public API only).
    """
    import json
    from importlib.metadata import PackageNotFoundError, distribution
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    source = "/path/to/simclock"
    try:
        url = urlparse(
            json.loads(distribution("simclock").read_text("direct_url.json") or "{}")["url"]
        )
        if url.scheme == "file" and os.path.exists(unquote(url.path)):
            source = unquote(url.path)
    except (PackageNotFoundError, ValueError, KeyError, TypeError, AttributeError):
        pass
    if source.endswith(".whl"):
        return f'pip install "simclock[{extra}] @ {Path(source).as_uri()}"'
    return f'pip install "{source}[{extra}]"'


if _missing:
    print(
        "python -m simclock_conformance: error: the conformance suite needs the 'conformance' "
        f"extra, which is not installed (missing: {', '.join(_missing)}); install it with: "
        f"{install_command('conformance')}",
        file=sys.stderr,
    )
    sys.exit(2)

from simclock_conformance.entry._run import main  # noqa: E402

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:
    # The recipe of the Python docs' note on SIGPIPE: stdout to devnull, so the
    # interpreter's last flush cannot fail again.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 141
sys.exit(status)
