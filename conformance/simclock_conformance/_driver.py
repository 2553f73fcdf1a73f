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
noticed before the next request is sent.
"""

from __future__ import annotations

import collections
import contextlib
import json
import queue
import subprocess
import threading
from typing import IO, Any

__all__ = ["DEFAULT_DEADLINE_S", "STARTUP_S", "Driver", "DriverError", "protocol_line"]

DEFAULT_DEADLINE_S = 10.0
STARTUP_S = 30.0
"""The least time ``hello``, the first request, gets: it includes starting the process."""
_STDERR_LINES = 20
_QUOTE = 300


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


class Driver:
    """One running driver process (C-WIRE-1: one process serves a whole run)."""

    def __init__(self, command: list[str], deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        self.command = command
        self.deadline_s = deadline_s
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
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
        threading.Thread(target=self._read_stderr, args=(self._proc.stderr,), daemon=True).start()

    def _read_stdout(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self._lines.put(raw.decode("utf-8", "replace"))
        self._lines.put(None)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def stderr_tail(self) -> list[str]:
        """The last lines the driver wrote on stderr."""
        return list(self._stderr)

    def _fail(self, evidence: str) -> DriverError:
        self.kill()
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
                f"noise): {_quote(extra.rstrip(chr(10)))}; it came before the request {line}"
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
            raise self._fail(
                f"the driver gave no reply within {deadline:g} s to the request {line}"
            ) from None
        if reply is None:
            raise self._ended(f"while answering the request {line}")
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
            f"noise): {_quote(extra.rstrip(chr(10)))}"
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
        if self._proc.poll() is None:
            self._proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5.0)
        # Only stdin: the reader threads end at the end of stdout and stderr.
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
