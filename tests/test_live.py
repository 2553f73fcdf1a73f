"""The live view (``simclock run/replay --live``): a Foxglove WebSocket server and a client.

The client is ``websockets`` speaking the Foxglove WebSocket protocol as the
app does: it offers the subprotocols, reads ``serverInfo`` and ``advertise``,
subscribes, and decodes the binary frames (opcode 1: subscription id, log time
ns, payload; opcode 2: time ns). What it receives is compared with the
recording of the same run. Loopback only (port 0); every loop is bounded; each
test stops its servers.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("foxglove", reason="the live view needs foxglove-sdk (simclock[live])")
pytest.importorskip("websockets", reason="the live view's tests need websockets (simclock[dev])")

from mcap.reader import make_reader
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

import simclock
from simclock.core._bus import EVENTS_TOPIC, Bus
from simclock.recording._format import encode_clock
from simclock.recording._live import SUBPROTOCOL, LiveView, parse_address
from simclock.sim._scenario import run_scenario
from simclock.sim._scenario_file import load_scenario

# foxglove-sdk serves "foxglove.sdk.v1"; the app offers it with the older "foxglove.websocket.v1".
PROTOCOLS = [Subprotocol("foxglove.sdk.v1"), Subprotocol("foxglove.websocket.v1")]
# What --live prints on stderr: the URL and the one subprotocol a client must offer.
LIVE_LINE = re.compile(
    r"^live: (ws://127\.0\.0\.1:\d+) \(WebSocket subprotocol ([\w.]+); Foxglove app: Open "
    r"connection, Foxglove WebSocket\)\n$"
)
DEADLINE_S = 20.0
ROOT = Path(__file__).resolve().parent.parent

SCENARIO = """\
name = "live"
seed = 3
mode = "{mode}"
duration = "{duration}"
rtf = {rtf}

[physics]
step = "10 ms"

[devices.enc]
period = "20 ms"
noise_std = 0.1

[devices.imu]
period = "30 ms"
latency = "10 ms"

[controllers.tick]
kind = "tick"
period = "50 ms"
"""


def _scenario(
    tmp: Path, mode: str = "realtime_paced", duration: str = "300 ms", rtf: int = 4
) -> Path:
    path = tmp / "live.toml"
    path.write_text(SCENARIO.format(mode=mode, duration=duration, rtf=rtf), encoding="utf-8")
    return path


Frames = list[tuple[str, int, bytes]]
"""(topic, log time ns, payload) per message-data frame, in arrival order."""


class Client:
    """A Foxglove WebSocket client: the channels advertised, frames received."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.info: dict[str, Any] = json.loads(ws.recv(timeout=DEADLINE_S))
        self.channels: dict[int, dict[str, Any]] = {}
        self.by_sub: dict[int, str] = {}
        self.frames: Frames = []
        self.times: list[int] = []

    def handle(self, frame: str | bytes) -> None:
        if isinstance(frame, str):
            op = json.loads(frame)
            if op["op"] == "advertise":
                for channel in op["channels"]:
                    self.channels[channel["id"]] = channel
            return
        if frame[0] == 1:
            sub, log_time = struct.unpack_from("<IQ", frame, 1)
            self.frames.append((self.by_sub[sub], log_time, bytes(frame[13:])))
        elif frame[0] == 2:
            self.times.append(struct.unpack_from("<Q", frame, 1)[0])

    def wait_channels(self, topics: set[str]) -> None:
        end = time.monotonic() + DEADLINE_S
        while {c["topic"] for c in self.channels.values()} < topics:
            assert time.monotonic() < end, f"not advertised in time: {topics}"
            self.handle(self.ws.recv(timeout=DEADLINE_S))

    def subscribe_all(self) -> None:
        """Subscribe to every channel advertised; return once the server has read it.

        The protocol acknowledges nothing: a request the server refuses (no
        Parameters capability) is answered with a status, after the subscribe.
        """
        subs = []
        for sub, (cid, channel) in enumerate(sorted(self.channels.items()), 1):
            subs.append({"id": sub, "channelId": cid})
            self.by_sub[sub] = channel["topic"]
        self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
        self.ws.send(json.dumps({"op": "getParameters", "parameterNames": [], "id": "sync"}))
        end = time.monotonic() + DEADLINE_S
        while True:
            assert time.monotonic() < end, "no answer to the sync request"
            frame = self.ws.recv(timeout=DEADLINE_S)
            if isinstance(frame, str) and json.loads(frame)["op"] == "status":
                return
            self.handle(frame)

    def read_until(self, done: Any) -> None:
        """Read frames until ``done(self)`` or the server closes (bounded)."""
        end = time.monotonic() + DEADLINE_S
        while not done(self):
            assert time.monotonic() < end, f"timed out with {len(self.frames)} frames"
            try:
                self.handle(self.ws.recv(timeout=max(0.01, end - time.monotonic())))
            except ConnectionClosed:
                return


@contextmanager
def client(url: str, protocols: list[Subprotocol] = PROTOCOLS) -> Iterator[Client]:
    with connect(url, subprotocols=protocols, open_timeout=DEADLINE_S, proxy=None) as ws:
        yield Client(ws)


def recorded(path: Path) -> Frames:
    """(topic, log time, data) of every record of a recording, in file order (draws left out)."""
    with path.open("rb") as f:
        return [
            (channel.topic, message.log_time, message.data)
            for _, channel, message in make_reader(f).iter_messages(log_time_order=False)
            if not channel.topic.startswith("/simclock/draws")
        ]


def bus_sequence(data: bytes) -> int:
    return int(json.loads(data)["sequence"])


def test_C_MCAP_1_C_MCAP_3_live_run_sends_the_recordings_records_at_their_stamps(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(_scenario(tmp_path))
    plain = run_scenario(scenario)
    out = tmp_path / "run.mcap"
    view = LiveView(port=0, clock_period_ns=scenario.physics.step_ns)
    try:
        for device in scenario.devices:
            view.advertise(device.spec.topic)
        view.advertise("/controllers/tick")
        with client(view.url) as c:
            assert c.info["op"] == "serverInfo"
            assert "time" in c.info["capabilities"]
            c.wait_channels({"/clock", "/sensors/enc", "/sensors/imu", "/controllers/tick"})
            advertised = {ch["topic"]: ch for ch in c.channels.values()}
            assert advertised["/clock"]["schemaName"] == "rosgraph_msgs/msg/Clock"
            assert advertised["/clock"]["encoding"] == "cdr"
            assert advertised["/sensors/enc"]["schemaName"] == "simclock/Message"
            assert advertised["/sensors/enc"]["schemaEncoding"] == "jsonschema"
            c.subscribe_all()
            result = run_scenario(scenario, out=out, subscriber=view.record)
            view.time_to(result.end_ns)
            want = recorded(out)
            c.read_until(lambda c: len(c.frames) >= len(want) and c.times[-1:] == [result.end_ns])
    finally:
        view.close()
    # The run is the same run: the live view changed nothing (C-MODE-1, C-X-FP).
    assert result.fingerprint == plain.fingerprint
    assert result.pacing is not None and result.pacing.mode.value == "realtime_paced"
    # Every record of the recording, on its topic, at its stamp, with its bytes, in order.
    assert c.frames == want
    assert [t for topic, t, _ in c.frames if topic == "/clock"] == list(
        range(0, 300_000_001, 10**7)
    )
    assert all(data == encode_clock(t) for topic, t, data in c.frames if topic == "/clock")
    # The server time: the simulated time, never going back, up to the end.
    assert c.times == sorted(c.times)
    assert c.times[0] == 0 and c.times[-1] == result.end_ns
    assert view.skipped == 0


def _live_line(proc: subprocess.Popen[str]) -> tuple[str, Subprotocol]:
    """The URL and the subprotocol the command printed."""
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = LIVE_LINE.match(line)
    assert found is not None, line
    return found.group(1), Subprotocol(found.group(2))


def _cli(*words: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-m", "simclock", *words],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _watch(proc: subprocess.Popen[str]) -> tuple[Client, str, str]:
    """Connect to the command's live view, subscribe to what it advertises, read to its end."""
    try:
        url, protocol = _live_line(proc)
        with client(url, [protocol]) as c:  # only what the command printed
            assert c.ws.subprotocol == protocol == SUBPROTOCOL
            c.wait_channels({"/clock"})
            c.read_until(lambda c: len(c.channels) >= 4)
            c.subscribe_all()
            c.read_until(lambda c: False)  # until the command stops its server
        out, err = proc.communicate(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    return c, out, err


def _check_against(c: Client, recording: Path) -> None:
    """Every frame received is the recording's record with the same bus sequence (or tick)."""
    records = recorded(recording)
    by_seq: dict[int, tuple[str, int, bytes]] = {}
    ticks: set[tuple[int, bytes]] = set()
    for topic, stamp, data in records:
        if topic == "/clock":
            ticks.add((stamp, data))
        else:
            by_seq[bus_sequence(data)] = (topic, stamp, data)
    data_frames = [f for f in c.frames if f[0] != "/clock"]
    assert data_frames, "no message received"
    for topic, stamp, data in data_frames:
        assert by_seq[bus_sequence(data)] == (topic, stamp, data)
    assert all((t, d) in ticks for topic, t, d in c.frames if topic == "/clock")
    # The server time: simulated, never going back, never past the recording's end.
    assert c.times == sorted(c.times)
    assert c.times and c.times[-1] <= max(t for _, t, _ in records)


def test_C_MODE_1_run_live_cli_keeps_the_fingerprint_and_sends_recorded_stamps(
    tmp_path: Path,
) -> None:
    path = _scenario(tmp_path, mode="deterministic_ci", duration="2 s", rtf=2)
    plain = run_scenario(load_scenario(path))
    out = tmp_path / "live.mcap"
    c, stdout, _ = _watch(
        _cli("run", str(path), "--no-progress", "--out", str(out), "--live", "127.0.0.1:0")
    )
    # --live paces the run (realtime_paced) and leaves the trace alone.
    assert "mode realtime_paced" in stdout
    assert stdout.splitlines()[-1] == f"fingerprint: {plain.fingerprint}"
    _check_against(c, out)


def test_C_REP_1_replay_live_cli_sends_the_recording_paced(tmp_path: Path) -> None:
    path = _scenario(tmp_path, mode="deterministic_ci", duration="2 s")
    rec = tmp_path / "run.mcap"
    run_scenario(load_scenario(path), out=rec)
    printed = subprocess.run(
        [sys.executable, "-m", "simclock", "replay", str(rec), "--no-progress"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ).stdout
    c, stdout, _ = _watch(
        _cli("replay", str(rec), "--no-progress", "--rtf", "2", "--live", "127.0.0.1:0")
    )
    assert stdout == printed  # the same lines, paced
    _check_against(c, rec)


def test_two_views_in_one_process_share_no_channel() -> None:
    a = LiveView(port=0)
    b = LiveView(port=0)
    try:
        a.advertise("/only/a")
        b.advertise("/only/b")
        with client(a.url) as ca, client(b.url) as cb:
            ca.wait_channels({"/clock", "/only/a"})
            cb.wait_channels({"/clock", "/only/b"})
            ca.subscribe_all()
            cb.subscribe_all()
            bus_a, bus_b = Bus(), Bus()
            bus_a.subscribe(None, a.record)
            bus_b.subscribe(None, b.record)
            bus_b.publish("/only/b", {"v": 2}, stamp_ns=5)
            bus_a.publish("/only/a", {"v": 1}, stamp_ns=7)
            ca.read_until(lambda c: any(f[0] == "/only/a" for f in c.frames))
            cb.read_until(lambda c: any(f[0] == "/only/b" for f in c.frames))
    finally:
        a.close()
        b.close()
    assert {ch["topic"] for ch in ca.channels.values()} == {"/clock", "/only/a"}
    assert {ch["topic"] for ch in cb.channels.values()} == {"/clock", "/only/b"}
    assert [f for f in ca.frames if f[0] != "/clock"] == [
        ("/only/a", 7, b'{"payload":{"v":1},"sequence":0}')
    ]
    assert [f for f in cb.frames if f[0] != "/clock"] == [
        ("/only/b", 5, b'{"payload":{"v":2},"sequence":0}')
    ]


def test_C_BUS_4_a_message_the_view_cannot_send_is_counted_not_raised() -> None:
    bus = Bus()
    view = LiveView(port=0)
    try:
        bus.subscribe(None, view.record)
        events: list[object] = []
        bus.subscribe(EVENTS_TOPIC, events.append)
        bus.publish("/x", {"v": 1}, stamp_ns=1)
        bus.publish("/x", simclock.RawPayload("bin", "s", b"\x00"), stamp_ns=2)  # another kind
        bus.publish("/y", object(), stamp_ns=3)  # no JSON form
    finally:
        view.close()
    assert events == []  # no SUBSCRIBER_FAILED: the trace is untouched
    assert view.skipped == 2
    assert view.problem == (
        "message sequence=1 on '/x' carries kind 'raw', its channel 'json' (one channel per topic)"
    )
    view.record(bus.publish("/x", {"v": 2}, stamp_ns=4))  # closed: nothing, no error
    assert view.skipped == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ("127.0.0.1", 8765, False)),
        ("9000", ("127.0.0.1", 9000, False)),
        (":0", ("127.0.0.1", 0, False)),
        ("localhost:8000", ("localhost", 8000, True)),
        ("0.0.0.0:8765", ("0.0.0.0", 8765, True)),
        ("[::1]:9", ("::1", 9, True)),
        ("example.org", ("example.org", 8765, True)),
    ],
)
def test_live_addresses(text: str, expected: tuple[str, int, bool]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "h:x",
            r"^--live 'h:x': the port must be an int from 0 to 65535 \(0: any free port\), "
            r"got 'x'$",
        ),
        (
            "h:70000",
            r"^--live 'h:70000': the port must be an int from 0 to 65535 \(0: any free port\), "
            r"got '70000'$",
        ),
        (
            "::1",
            r"^--live '::1' is not HOST:PORT; write an IPv6 host in brackets, e.g. \[::1\]:8765$",
        ),
    ],
)
def test_live_address_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_address(text)


def test_a_non_loopback_host_is_refused_unless_allowed() -> None:
    with pytest.raises(
        ValueError,
        match=r"^host '0\.0\.0\.0' is not a loopback address: the live view has no authentication, "
        r"so anyone who reaches it sees the run; pass allow_remote=True to listen there$",
    ):
        LiveView("0.0.0.0", 0)


def test_a_port_in_use_is_one_line_naming_the_address() -> None:
    first = LiveView(port=0)
    try:
        with pytest.raises(
            RuntimeError,
            match=rf"^the live view cannot listen on 127\.0\.0\.1:{first.port} \(.+\); "
            r"pass another port, or 0 for any free port$",
        ):
            LiveView(port=first.port)
    finally:
        first.close()


def test_cli_refuses_a_bad_live_address_before_running(tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    out = tmp_path / "never.mcap"
    done = subprocess.run(
        [sys.executable, "-m", "simclock", "run", str(path), "--out", str(out), "--live", "h:x"],
        capture_output=True,
        check=False,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 2
    assert done.stderr == (
        "simclock run: error: --live 'h:x': the port must be an int from 0 to 65535 "
        "(0: any free port), got 'x'\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "remote", "warned"),
    [("0.0.0.0:0", True, True), ("127.0.0.1:0", False, False), ("", False, False)],
)
def test_cli_allows_a_non_loopback_host_only_when_written_and_warns(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    remote: bool,
    warned: bool,
) -> None:
    import argparse

    from simclock.cli import _live

    made: list[tuple[str, int, bool]] = []

    class Fake:
        url = "ws://fake"
        subprotocol = "foxglove.sdk.v1"

        def __init__(self, host: str, port: int, **kwargs: Any) -> None:
            made.append((host, port, kwargs["allow_remote"]))

    # No server is started: the test checks what the command asks for and what it says.
    monkeypatch.setattr(_live, "LiveView", Fake)
    args = argparse.Namespace(live=text, command="run", command_name="run")
    _live.open_live(args, clock_period_ns=None, start_ns=0)
    host = text.rpartition(":")[0] or "127.0.0.1"
    assert made == [(host, 0 if text else 8765, remote)]
    err = capsys.readouterr().err
    warning = (
        f"simclock run: warning: the live view listens on {host}, not on loopback: anyone who "
        "reaches that address sees the run (no authentication)\n"
    )
    assert err == (warning if warned else "") + (
        "live: ws://fake (WebSocket subprotocol foxglove.sdk.v1; Foxglove app: Open connection, "
        "Foxglove WebSocket)\n"
    )


def test_the_documented_subprotocol_is_the_one_the_server_accepts() -> None:
    """A client offering what docs/recording.md and --live name connects; one offering only the
    older ``foxglove.websocket.v1`` is refused in the handshake (HTTP 400)."""
    from websockets.exceptions import InvalidStatus

    page = (ROOT / "docs" / "recording.md").read_text(encoding="utf-8")
    assert f"`{SUBPROTOCOL}`" in page
    assert f"WebSocket subprotocol {SUBPROTOCOL}; Foxglove app" in page
    view = LiveView(port=0)
    try:
        with client(view.url, [Subprotocol(SUBPROTOCOL)]) as c:
            assert c.ws.subprotocol == SUBPROTOCOL
            assert c.info["op"] == "serverInfo"
        with (
            pytest.raises(InvalidStatus) as refused,
            client(view.url, [Subprotocol("foxglove.websocket.v1")]),
        ):
            pass
        assert refused.value.response.status_code == 400
    finally:
        view.close()
