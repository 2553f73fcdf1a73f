"""``simclock info | replay | diff``: look into recordings (SPEC §5, §6, C-X-FP).

* ``simclock info FILE [--json]``: writer, seed, contract version, time span,
  message counts per topic, chunking, persisted draws and the fingerprint;
  for a ``simclock run`` recording also the scenario's hash and canonical
  text and the MJCF model's hash.
  For a simclock recording the counts are of bus messages, the trace the
  fingerprint covers (what ``simclock run`` reports writing, ``replay``
  prints and ``recover`` says it kept); the persisted draws and the
  recorder's own ``/clock`` ticks are stored besides and not counted. For
  another writer's file every message of every channel counts.
* ``simclock replay FILE [--topics T ...] [--until TIME] [--json]``: replays
  the file with `ReplayClock` and prints every bus message in
  recorded total order, one per line: ``<stamp_ns> <sequence> <topic>
  <canonical JSON payload>``, or JSON lines with ``--json``. ``--until`` stops
  after the messages stamped at or before ``TIME``, a duration as ``--span``
  takes (``"40 ms"``) or an int of nanoseconds. ``--rtf X`` paces the replay
  (``realtime_paced``, X simulated seconds per wall second); ``--live``
  shows it in the Foxglove app as it goes (`simclock.cli._live`), at
  ``--rtf`` or real time.
* ``simclock diff A B``: reads both recordings (every check of replay on) and
  exits 0 when their traces are the same (so are their fingerprints);
  otherwise prints the first divergence (index, time, sequence, topic and
  both payloads) and exits 1. Before either, when the two runs stored
  different scenarios or models, it says so and lists every differing key
  of the canonical scenario (``controllers.pd.kp: 8.0 -> 9.0``). Stored
  fingerprints alone are not trusted: an edited file must not pass as
  identical.

Exit code 2 for a file that cannot be read (``simclock <command>: error:``,
the message names the file and where). The progress bar,
`simclock.cli._common.Progress`, appears on stderr, on a terminal
only, once the work has lasted a second (``--no-progress`` disables it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final, TextIO

from simclock.cli._common import Progress, add_command
from simclock.cli._live import add_live_argument, close_live, open_live
from simclock.core._bus import Message
from simclock.realtime._pacing import PacingMode, PacingReference, run_paced
from simclock.recording._clock import ReplayClock
from simclock.recording._fingerprint import canonical_json, payload_kind_and_json
from simclock.recording._format import MODEL_SHA256_KEY, SCENARIO_SHA256_KEY, SCENARIO_TEXT_KEY
from simclock.recording._reader import RecordingInfo, RecordingReader

__all__ = ["handler_diff", "handler_info", "handler_replay", "register", "scenario_changes"]

# Shown on lines of their own by ``info`` (the canonical text is long), not as metadata lines.
_SHOWN_APART = (SCENARIO_TEXT_KEY, SCENARIO_SHA256_KEY, MODEL_SHA256_KEY)

_SLICES = 200  # replay advances in this many slices, so the progress bar can move


def register(subparsers: Any) -> None:
    """Add ``info``, ``replay`` and ``diff`` to the ``simclock`` parser."""
    info = add_command(
        subparsers,
        "info",
        handler_info,
        help="describe a recording: seed, duration, topics, fingerprint",
    )
    info.add_argument("file", help="an .mcap recording or a rosbag2 directory")
    info.add_argument("--json", action="store_true", help="print one JSON object")

    replay = add_command(
        subparsers,
        "replay",
        handler_replay,
        help="replay a recording and print its messages in total order",
    )
    replay.add_argument("file", help="an .mcap recording or a rosbag2 directory")
    replay.add_argument("--topics", nargs="+", metavar="TOPIC", help="only these topics")
    replay.add_argument(
        "--until",
        metavar="TIME",
        help='stop after this time, e.g. "40 ms" (or int nanoseconds)',
    )
    replay.add_argument("--json", action="store_true", help="print JSON lines")
    replay.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    replay.add_argument(
        "--rtf",
        type=_rtf,
        metavar="X",
        help="pace the replay: X simulated seconds per wall second (default 1 with --live, "
        "else as fast as possible)",
    )
    add_live_argument(replay, "the replay")

    diff = add_command(
        subparsers,
        "diff",
        handler_diff,
        help="compare two recordings; exit 1 and show the first divergence",
    )
    diff.add_argument("a", help="first recording")
    diff.add_argument("b", help="second recording")
    diff.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def _rtf(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value <= 0 or abs(value.adjusted()) > 12:
        raise argparse.ArgumentTypeError(
            f"expected a real-time factor > 0 (1 is real time, 2 twice as fast), got {text!r}"
        )
    return value


def _until(text: str) -> int:
    """``--until``: a duration as ``--span`` takes it (``"40 ms"``), or digits of nanoseconds.

    Parsed by the handler, not by argparse, so that a bad value is one line
    (``simclock replay: error: --until: ...``) before any file is opened.
    """
    from simclock.core._names import safe_repr
    from simclock.sim._scenario_file import ScenarioError, parse_duration

    if re.fullmatch(r"[0-9]+", text):
        # Invariant: at most 20 digits before int(): no 10**6-digit conversion.
        if len(text) <= 20 and int(text) <= 2**64 - 1:
            return int(text)
        raise ScenarioError(
            "--until",
            f"{safe_repr(text)} is beyond 2**64 - 1 ns (about 584 years), the largest time-int",
        )
    return parse_duration(text, "--until")


# -- info -----------------------------------------------------------------------------


def info_dict(info: RecordingInfo) -> dict[str, Any]:
    """The JSON form of ``simclock info``."""
    return {
        "file": info.path,
        "simclock": info.simclock,
        "library": info.library,
        "seed": info.seed,
        "contract_version": info.metadata.get("contract_version"),
        "start_ns": info.start_ns,
        "end_ns": info.end_ns,
        "duration_ns": info.duration_ns,
        "step_ns": info.step_ns,
        "message_count": info.message_count,
        "topics": dict(sorted(info.topic_counts.items())),
        "chunks": info.chunk_count,
        "compression": info.compression,
        "draw_labels": list(info.draw_labels),
        "fingerprint": info.fingerprint,
        "fingerprint_algorithm": info.metadata.get("fingerprint_algorithm"),
        "metadata": dict(info.user_metadata),
        "recovered": info.recovered,
        "container": info.container,
        "note": info.note,
    }


def handler_info(args: argparse.Namespace) -> int:
    """``simclock info FILE``."""
    with RecordingReader(args.file) as reader:
        info = reader.info
    data = info_dict(info)
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
        return 0
    out = sys.stdout
    kind = "simclock recording" if info.simclock else "not written by simclock"
    if info.container == "rosbag2":
        kind = "ROS 2 bag, " + ("a simclock export" if info.simclock else "not written by simclock")
    out.write(f"file:        {info.path}\n")
    out.write(f"writer:      {info.library} ({kind})\n")
    if info.simclock:
        out.write(f"seed:        {info.seed}\n")
        out.write(f"contract:    {data['contract_version']}\n")
    out.write(
        f"time:        {info.start_ns} ns .. {info.end_ns} ns "
        f"(duration {info.duration_ns} ns = {info.duration_ns / 1e9:.9f} s)\n"
    )
    out.write(f"step:        {info.step_ns} ns\n")
    chunks = f"{info.chunk_count} chunk{'' if info.chunk_count == 1 else 's'}"
    if info.simclock:
        # The count of `simclock run`, `replay` and `recover`: the fingerprinted trace.
        what = "bus messages (the fingerprinted trace; draws and /clock ticks not counted)"
    else:
        what = "messages (every channel)"
    out.write(f"messages:    {info.message_count} {what}, in {chunks} ({info.compression})\n")
    width = max((len(t) for t in info.topic_counts), default=0)
    for topic, count in sorted(info.topic_counts.items()):
        out.write(f"  {topic:<{width}}  {count}\n")
    if info.simclock:
        labels = ", ".join(info.draw_labels) if info.draw_labels else "not persisted"
        out.write(f"draws:       {labels}\n")
        out.write(f"fingerprint: {info.fingerprint} ({data['fingerprint_algorithm']})\n")
    else:
        out.write("fingerprint: none stored (simclock diff computes one)\n")
    user = info.user_metadata
    for key, value in sorted(user.items()):
        if key not in _SHOWN_APART:
            out.write(f"metadata:    {key} = {value}\n")
    if SCENARIO_SHA256_KEY in user:
        out.write(f"scenario:    sha256 {user[SCENARIO_SHA256_KEY]} of its canonical text:\n")
    if SCENARIO_TEXT_KEY in user:
        out.write(f"             {user[SCENARIO_TEXT_KEY]}\n")
    if MODEL_SHA256_KEY in user:
        out.write(f"model:       sha256 {user[MODEL_SHA256_KEY]} of the MJCF file\n")
    if info.recovered:
        out.write(f"recovered:   {info.recovered}\n")
    if info.note:
        out.write(f"note:        {info.note}\n")
    return 0


# -- replay ---------------------------------------------------------------------------


def format_message(message: Message, as_json: bool) -> str:
    """One output line of ``simclock replay`` (without the newline)."""
    kind, text = payload_kind_and_json(message.payload)
    if as_json:
        return (
            f'{{"kind":"{kind}","payload":{text},"sequence":{message.sequence},'
            f'"stamp_ns":{message.stamp_ns},"topic":{json.dumps(message.topic)}}}'
        )
    return f"{message.stamp_ns} {message.sequence} {message.topic} {text}"


class _Lines:
    """The bus subscriber that prints each message; remembers a closed stdout.

    The bus reports a subscriber's exception as an event and goes on
    (C-ERR-1), so a ``BrokenPipeError`` would not stop the replay: the sink
    keeps it in ``closed`` and the replay loop raises it between slices.
    """

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self._out = out
        self._json = as_json
        self.closed: BrokenPipeError | None = None

    def __call__(self, message: Message) -> None:
        if self.closed is not None:
            return
        try:
            self._out.write(format_message(message, self._json))
            self._out.write("\n")
        except BrokenPipeError as exc:
            self.closed = exc


def handler_replay(args: argparse.Namespace) -> int:
    """``simclock replay FILE [--topics ...] [--until TIME] [--json] [--rtf X] [--live]``."""
    until = None if args.until is None else _until(args.until)
    clock = ReplayClock(args.file, topics=args.topics)
    progress = Progress(f"simclock replay {args.file}", not args.no_progress)
    view = None
    reached: int | None = None
    try:
        with clock:
            if args.live is not None:
                period = clock.info.metadata.get("clock_period_ns", "")
                view = open_live(
                    args,
                    clock_period_ns=int(period) if period.isdigit() else None,
                    start_ns=clock.now_ns(),
                )
                clock.bus.subscribe(None, view.record)
            lines = _Lines(sys.stdout, args.json)
            clock.bus.subscribe(None, lines)
            start = clock.now_ns()
            end = clock.end_ns() if until is None else until
            if end < start:
                return 0  # --until before the recording starts: nothing to print
            total = end - start
            paced = args.rtf is not None or view is not None
            rtf = Decimal(1) if args.rtf is None else args.rtf
            reference = PacingReference()  # one wall-clock anchor for the whole replay
            # Slices only move the progress bar: splitting time changes nothing (C-ADV-5).
            step = max(1, -(-total // _SLICES))
            while True:
                until = clock.now_ns() + min(step, end - clock.now_ns())
                if paced:
                    run_paced(
                        clock, until, mode=PacingMode.REALTIME_PACED, rtf=rtf, reference=reference
                    )
                else:
                    clock.advance(until - clock.now_ns())
                if view is not None:
                    view.time_to(clock.now_ns())
                if lines.closed is not None:
                    raise lines.closed
                progress(clock.now_ns() - start, total)
                if clock.now_ns() >= end:
                    break
            reached = clock.now_ns()
    finally:
        progress.close()
        close_live(view, reached)
    return 0


# -- diff -------------------------------------------------------------------------------


def _key(message: Message) -> tuple[int, int, str, str, str]:
    kind, text = payload_kind_and_json(message.payload)
    return (message.stamp_ns, message.sequence, message.topic, kind, text)


Traced = Iterator[tuple[Message, bytes | None]]


def _compare(a: Traced, b: Traced, tick: Any) -> tuple[int, Message | None, Message | None] | None:
    """``None`` when the traces are equal, else the first index where they differ.

    Equal fingerprint lines (both sides simclock recordings) mean equal keys;
    unequal or missing lines fall back to the keys, so the verdict is the keys'.
    """
    for index in itertools.count():
        pa = next(a, None)
        pb = next(b, None)
        if pa is None or pb is None:
            if pa is None and pb is None:
                return None
            return index, None if pa is None else pa[0], None if pb is None else pb[0]
        ma, line_a = pa
        mb, line_b = pb
        if (line_a is None or line_a != line_b) and _key(ma) != _key(mb):
            return index, ma, mb
        if index % 4096 == 0:
            tick(ma.stamp_ns)
    return None  # pragma: no cover - itertools.count() never ends


def _side(message: Message | None) -> dict[str, str]:
    if message is None:
        return {"time": "(ended)", "sequence": "(ended)", "topic": "(ended)", "payload": "(ended)"}
    kind, text = payload_kind_and_json(message.payload)
    return {
        "time": f"{message.stamp_ns} ns",
        "sequence": str(message.sequence),
        "topic": message.topic,
        "payload": text if kind == "json" else f"{kind} {text}",
    }


def _flatten(value: object, key: str, out: dict[str, str]) -> None:
    """Each leaf of a canonical scenario as ``dotted.key -> canonical JSON`` (lists are leaves)."""
    if isinstance(value, dict) and (value or not key):
        for sub, item in value.items():
            _flatten(item, f"{key}.{sub}" if key else sub, out)
    else:
        out[key] = canonical_json(value, key)


def scenario_changes(text_a: str, text_b: str) -> list[str]:
    """The keys where two canonical scenario texts differ: ``key: A-value -> B-value``.

    Values are canonical JSON; a key only one side has shows ``(absent)`` on
    the other. Sorted by key. A text that is not a JSON object counts as one
    value under the key ``(scenario)``.
    """
    sides: list[dict[str, str]] = []
    for text in (text_a, text_b):
        flat: dict[str, str] = {}
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            _flatten(data, "", flat)
        else:
            flat["(scenario)"] = json.dumps(text)
        sides.append(flat)
    a, b = sides
    return [
        f"{key}: {a.get(key, '(absent)')} -> {b.get(key, '(absent)')}"
        for key in sorted(a.keys() | b.keys())
        if a.get(key) != b.get(key)
    ]


# The keys of the ``simclock`` metadata record that say how a run was made (not what it
# gave: fingerprint, counts and times show in the messages), in the order diff names them.
_RUN_KEYS: Final = (
    ("seed", "seed"),
    ("contract_version", "contract"),
    ("simclock", "version simclock"),
    ("python", "version python"),
    ("numpy", "version numpy"),
    ("mcap", "version mcap"),
    ("mcap_ros2_support", "version mcap_ros2_support"),
    ("clock_period_ns", "clock period"),
    ("record_draws", "draws"),
)
# User metadata keys that _provenance reports (the scenario's and model's digests).
_PROVENANCE_KEYS: Final = frozenset({SCENARIO_TEXT_KEY, SCENARIO_SHA256_KEY, MODEL_SHA256_KEY})


def _metadata_changes(a: RecordingInfo, b: RecordingInfo) -> list[str]:
    """How the two recordings' metadata differ: ``  <what>: A <a> | B <b>`` per difference.

    The seed, the contract and library versions and recording options of the
    ``simclock`` record, then every user metadata key but the scenario's (the
    lines of `_provenance`), sorted: ``mode``, ``scenario``, ``step_ns`` and
    ``devices`` for a ``simclock run``, and a ``Recorder``'s own keys. A side
    without the key shows ``(absent)``. A foreign file has no seed
    (``(none)``) and no ``simclock`` record: the writers' libraries are
    compared instead. Empty when nothing differs.
    """
    rows: list[tuple[str, str, str]] = []
    if a.seed != b.seed:
        seeds = ["(none)" if seed is None else str(seed) for seed in (a.seed, b.seed)]
        rows.append(("seed", seeds[0], seeds[1]))
    if a.metadata and b.metadata:
        for key, label in _RUN_KEYS[1:]:
            va, vb = a.metadata.get(key), b.metadata.get(key)
            if va != vb:
                if key == "clock_period_ns":  # "" records no /clock channel
                    va, vb = (v if v != "" else "(no /clock)" for v in (va, vb))
                rows.append((label, _shown(va), _shown(vb)))
    elif a.library != b.library:  # a foreign file has no simclock record: who wrote each
        rows.append(("written by", _shown(a.library), _shown(b.library)))
    ua, ub = a.user_metadata, b.user_metadata
    for key in sorted((ua.keys() | ub.keys()) - _PROVENANCE_KEYS):
        if ua.get(key) != ub.get(key):
            rows.append((f"metadata {key}", _shown(ua.get(key)), _shown(ub.get(key))))
    if not rows:
        return []
    width = max(len(label) for label, _a, _b in rows) + 1
    lines = ["recordings' metadata differ:"]
    lines.extend(f"  {label + ':':<{width}} A {va} | B {vb}" for label, va, vb in rows)
    return lines


def _shown(value: object) -> str:
    """A metadata value as diff shows it: ``(absent)`` for no key, ``""`` for an empty one."""
    if value is None:
        return "(absent)"
    return str(value) if str(value) else '""'


def _provenance(ua: Mapping[str, str], ub: Mapping[str, str]) -> list[str]:
    """What ``diff`` says about the runs' scenarios and models, before comparing messages.

    Nothing when both recordings store the same scenario and model, or when
    neither stores them (recordings made by a ``Recorder`` of your own).
    """
    lines: list[str] = []
    ha, hb = ua.get(SCENARIO_SHA256_KEY), ub.get(SCENARIO_SHA256_KEY)
    if ha is None and hb is None:
        return lines
    if ha is None or hb is None:
        has, lacks = ("A", "B") if hb is None else ("B", "A")
        lines.append(f"scenario: only {has} stores its scenario ({lacks} does not); not compared")
    elif ha != hb:
        lines.append(f"scenarios differ: A sha256 {ha} | B sha256 {hb}")
        changes = scenario_changes(ua.get(SCENARIO_TEXT_KEY, ""), ub.get(SCENARIO_TEXT_KEY, ""))
        lines.extend(f"  {change}" for change in changes)
    ma, mb = ua.get(MODEL_SHA256_KEY), ub.get(MODEL_SHA256_KEY)
    if ma is not None and mb is not None and ma != mb:
        lines.append(f"models differ: A sha256 {ma} | B sha256 {mb}")
    return lines


def handler_diff(args: argparse.Namespace) -> int:
    """``simclock diff A B``: exit 0 when equal, 1 with the first divergence.

    First how the recordings' metadata differ (`_metadata_changes`: seed,
    versions, mode and the other user metadata); then, when the runs stored
    their scenarios (``simclock run --out``), whether they come from
    different scenarios (with each differing key of the canonical scenario)
    or different MJCF models; then the messages. Metadata alone never makes
    the exit status 1: two runs in different modes are identical traces.
    """
    with RecordingReader(args.a) as ra, RecordingReader(args.b) as rb:
        provenance = _metadata_changes(ra.info, rb.info)
        provenance += _provenance(ra.info.user_metadata, rb.info.user_metadata)
        fa, fb = ra.info.fingerprint, rb.info.fingerprint
        # Equal stored fingerprints are not trusted alone: the files are read (and
        # checked against them), so an edited message is found, not called identical.
        progress = Progress(f"simclock diff {args.a} {args.b}", not args.no_progress)
        start = min(ra.info.start_ns, rb.info.start_ns)
        total = max(ra.info.end_ns, rb.info.end_ns) - start
        try:
            found = _compare(
                ra._traced_messages(), rb._traced_messages(), lambda t: progress(t - start, total)
            )
        finally:
            progress.close()
    for line in provenance:
        print(line)
    if found is None:
        note = f"fingerprint {fa} ({ra.info.message_count} messages)" if fa else "same trace"
        print(f"identical: {note}")
        return 0
    index, ma, mb = found
    print(f"recordings differ at message #{index} (0-based, in total order):")
    left, right = _side(ma), _side(mb)
    for field in ("time", "sequence", "topic"):
        print(f"  {field + ':':<10} A {left[field]} | B {right[field]}")
    print(f"  payload A: {left['payload']}")
    print(f"  payload B: {right['payload']}")
    if fa or fb:
        print(f"  fingerprints: A {fa or '(none)'} | B {fb or '(none)'}")
    return 1
