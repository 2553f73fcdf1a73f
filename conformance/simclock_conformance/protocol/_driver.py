"""Talking to a driver process over its stdin and stdout (SPEC §18, C-WIRE-1, C-WIRE-5).

:class:`Driver` starts ``CMD ARG...``, sends one JSON request per line and
waits for its one reply. Every way a driver can misbehave becomes a
:class:`DriverError` carrying the evidence (the exit status, the line
quoted, the request it was answering) and the last lines of its stderr; the
caller fails the clause it was in and starts a new process for the next
test. Nothing here raises anything else for what a driver does.

Detected: the process exits or closes its stdout; a line that is not one JSON
object; no reply within the deadline (default 10 s per request); a line
written when no request was waiting (a reply to nothing, stdout noise),
noticed before the next request is sent; a line longer than
:data:`MAX_REPLY_BYTES` (the runner keeps only its first bytes, as evidence).

What the runner keeps from a driver is bounded, whatever the driver writes:
one reply line of at most :data:`MAX_REPLY_BYTES`, the last
``_STDERR_LINES`` lines of stderr of at most ``_STDERR_LINE_CHARS`` each, and
quoted evidence of at most ``_QUOTE`` characters per line.
"""

from __future__ import annotations

import collections
import contextlib
import json
import queue
import subprocess
import threading
from typing import IO, Any

__all__ = [
    "DEFAULT_DEADLINE_S",
    "MAX_REPLY_BYTES",
    "STARTUP_S",
    "Driver",
    "DriverError",
    "clip",
    "protocol_line",
]

DEFAULT_DEADLINE_S = 10.0
STARTUP_S = 30.0
"""The least time ``hello``, the first request, gets: it includes starting the process."""
MAX_REPLY_BYTES = 1 << 20
"""The longest reply line the runner accepts (1 MiB, its ``\\n`` included; C-WIRE-1, C-WIRE-5).

Fifty times the longest reply of any clause program or golden vector (about
21 kB: C-PER-3's hundreds of firings). A longer line fails the clause it
came in, as a driver failure quoting its start; the rest of it is read and
dropped, never kept.
"""
_STDERR_LINES = 20
_STDERR_LINE_CHARS = 500
_QUOTE = 300
_CHUNK = 1 << 16
_QUEUED_LINES = 8


def clip(text: str, limit: int = 2000) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out (bounded evidence)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...(truncated, {len(text)} characters in all)"


def protocol_line(obj: object) -> str:
    """One request or reply as the protocol writes it: compact JSON, one line (C-WIRE-1)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _quote(line: str) -> str:
    return repr(line if len(line) <= _QUOTE else line[:_QUOTE] + "...(truncated)")


class DriverError(Exception):
    """The driver broke the transport (C-WIRE-5): ``evidence`` says how, ``stderr`` its tail."""

    def __init__(self, evidence: str, stderr: list[str]) -> None:
        self.evidence = evidence
        self.stderr = stderr
        tail = "\n".join(f"  | {line}" for line in stderr) if stderr else "  (stderr was empty)"
        super().__init__(f"driver failure: {evidence}\nlast lines of the driver's stderr:\n{tail}")


class _Oversized:
    """A stdout line longer than :data:`MAX_REPLY_BYTES`: its size and its first bytes only."""

    def __init__(self, size: int, head: str) -> None:
        self.size = size
        self.head = head
        self.ended = False

    def describe(self, what: str) -> str:
        """``what`` (``"reply to the request ..."``) with the size, the limit and the start."""
        if self.ended:
            return (
                f"the driver's {what} of {self.size} bytes exceeds the {MAX_REPLY_BYTES}-byte "
                f"limit of a reply line; it starts {_quote(self.head)}"
            )
        return (
            f"the driver's {what} exceeds the {MAX_REPLY_BYTES}-byte limit of a reply line "
            f"(more than {self.size} bytes, not ended); it starts {_quote(self.head)}"
        )


_Line = str | _Oversized | None


def _unasked(line: str | _Oversized) -> str:
    if isinstance(line, _Oversized):
        return line.describe("unasked line")
    return _quote(line.rstrip("\n"))


class Driver:
    """One running driver process (C-WIRE-1: one process serves a whole run)."""

    def __init__(self, command: list[str], deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        self.command = command
        self.deadline_s = deadline_s
        # Bounded: a driver flooding stdout waits on its pipe instead of filling memory.
        self._lines: queue.Queue[_Line] = queue.Queue(maxsize=_QUEUED_LINES)
        self._dead = False
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._written = 0  # stderr lines read so far
        self._mark = 0  # ... when the current test began (see mark())
        self._oversized: _Oversized | None = None
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise DriverError(
                f"could not start {' '.join(command)!r}: {exc.strerror or exc}", []
            ) from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        threading.Thread(target=self._read_stdout, args=(self._proc.stdout,), daemon=True).start()
        self._stderr_reader = threading.Thread(
            target=self._read_stderr, args=(self._proc.stderr,), daemon=True
        )
        self._stderr_reader.start()

    def _put(self, item: _Line) -> None:
        if not self._dead:  # a killed driver's last lines are dropped, never queued
            self._lines.put(item)

    def _read_stdout(self, stream: IO[bytes]) -> None:
        while True:
            raw = stream.readline(MAX_REPLY_BYTES + 1)
            if not raw:
                break
            if len(raw) <= MAX_REPLY_BYTES:
                self._put(raw.decode("utf-8", "replace"))
                continue
            # Too long: keep its start and count the rest, dropping it as it comes.
            self._oversized = _Oversized(len(raw), raw[: _QUOTE + 1].decode("utf-8", "replace"))
            self._oversized.ended = raw.endswith(b"\n")
            while not self._oversized.ended:
                rest = stream.readline(_CHUNK)
                if not rest:
                    break
                self._oversized.size += len(rest)
                self._oversized.ended = rest.endswith(b"\n")
            if self._oversized.ended:
                self._oversized.size -= 1  # the end of line is not counted
            self._put(self._oversized)
            self._oversized = None
        self._put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        middle = False  # inside a line longer than _STDERR_LINE_CHARS: its rest is dropped
        while True:
            raw = stream.readline(_STDERR_LINE_CHARS)
            if not raw:
                break
            if not middle:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self._stderr.append(line if raw.endswith(b"\n") else line + "...(truncated)")
                self._written += 1
            middle = not raw.endswith(b"\n")

    def mark(self) -> None:
        """A test begins: :meth:`stderr_tail` quotes only what the driver writes from now on."""
        self._mark = self._written

    def stderr_tail(self) -> list[str]:
        """The last lines the driver wrote on stderr since :meth:`mark` (the current test)."""
        since = self._written - self._mark
        return list(self._stderr)[-since:] if since > 0 else []

    def _fail(self, evidence: str) -> DriverError:
        self.kill()
        # The driver is dead, so its stderr ends: wait for the reader to take its last
        # lines (written just before the fault, they are the best evidence). Bounded,
        # as a grandchild may still hold the pipe open.
        self._stderr_reader.join(timeout=2.0)
        return DriverError(evidence, self.stderr_tail())

    def _ended(self, what: str) -> DriverError:
        try:
            code = self._proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return self._fail(f"the driver closed its stdout {what} but did not exit")
        if code < 0:
            return self._fail(f"the driver was killed by signal {-code} {what}")
        return self._fail(f"the driver exited with status {code} {what}")

    def request(self, obj: dict[str, Any], deadline_s: float | None = None) -> dict[str, Any]:
        """Send one request; return its reply (a JSON object) or raise :class:`DriverError`."""
        deadline = self.deadline_s if deadline_s is None else deadline_s
        line = protocol_line(obj)
        try:
            extra = self._lines.get_nowait()
        except queue.Empty:
            pass
        else:
            if extra is None:
                raise self._ended(f"before the request {line}")
            raise self._fail(
                f"the driver wrote a line no request asked for (a reply to nothing or stdout "
                f"noise): {_unasked(extra)}; it came before the request {line}"
            )
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line.encode("utf-8") + b"\n")
            self._proc.stdin.flush()
        except OSError:
            raise self._ended(f"(its stdin is closed) before the request {line}") from None
        try:
            reply = self._lines.get(timeout=deadline)
        except queue.Empty:
            growing = self._oversized
            if growing is not None:
                raise self._fail(
                    growing.describe(f"reply to the request {line}")
                    + f"; no end of line within {deadline:g} s"
                ) from None
            raise self._fail(
                f"the driver gave no reply within {deadline:g} s to the request {line}"
            ) from None
        if reply is None:
            raise self._ended(f"while answering the request {line}")
        if isinstance(reply, _Oversized):
            raise self._fail(reply.describe(f"reply to the request {line}"))
        text = reply.rstrip("\n")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self._fail(
                f"the driver answered the request {line} with a line that is not one JSON "
                f"object: {_quote(text)}"
            )
        return data

    def drain(self, grace_s: float = 0.02) -> None:
        """Raise :class:`DriverError` if a line arrives within ``grace_s`` unasked (C-WIRE-1).

        Called at the end of each test: a reply to nothing written just after
        a reply would otherwise shift every later reply by one.
        """
        try:
            extra = self._lines.get(timeout=grace_s)
        except queue.Empty:
            return
        if extra is None:
            raise self._ended("after its last reply")
        raise self._fail(
            "the driver wrote a line no request asked for (a reply to nothing or stdout "
            f"noise): {_unasked(extra)}"
        )

    def close(self) -> None:
        """Send ``quit`` politely, then make sure the process is gone."""
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(b'{"op":"quit"}\n')
                self._proc.stdin.close()
                self._proc.wait(timeout=2.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        """End the process now (a driver that failed is never asked anything again)."""
        self._dead = True
        if self._proc.poll() is None:
            self._proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5.0)
        # Free what was queued: a reader waiting to queue a line then sees _dead and ends.
        with contextlib.suppress(queue.Empty):
            while True:
                self._lines.get_nowait()
        # Only stdin: the reader threads end at the end of stdout and stderr.
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
