"""``simclock info | replay | diff`` (SPEC §5, §6, C-X-FP)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_replay_helpers import record, replace_in_data, resealed, rewrite

from simclock import EVENTS_TOPIC, Bus, Event, EventKind, Recorder
from simclock.cli._main import main


def _tiny(path: Path, *, cmd: object = "go", extra: bool = False) -> str:
    bus = Bus()
    with Recorder(path, bus, seed=3, metadata={"who": "test"}) as rec:
        bus.publish("/a", {"x": 1}, stamp_ns=0)
        bus.publish("/b", [1, 2], stamp_ns=0)
        bus.publish("/cmd", cmd, stamp_ns=5)
        bus.publish(EVENTS_TOPIC, Event(EventKind.PACING_LAG, 5, {"lag_ns": 2}), stamp_ns=5)
        bus.publish("/a", {"x": 2}, stamp_ns=9)
        if extra:
            bus.publish("/a", {"x": 3}, stamp_ns=9)
    return rec.fingerprint()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.mcap"
    fp = _tiny(path)
    code, out, err = _run(capsys, "info", str(path))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"file:        {path}"
    assert lines[1].startswith("writer:      simclock/0.1.0 mcap-python/")
    assert lines[1].endswith(" (simclock recording)")
    assert lines[2:] == [
        "seed:        3",
        "contract:    1.0",
        "time:        0 ns .. 9 ns (duration 9 ns = 0.000000009 s)",
        "step:        1 ns",
        "messages:    5 bus messages (the fingerprinted trace; draws and /clock ticks not "
        "counted), in 1 chunk (zstd)",
        "  /a                2",
        "  /b                1",
        "  /cmd              1",
        "  /simclock/events  1",
        "draws:       not persisted",
        f"fingerprint: {fp} (simclock-trace-v1/sha256)",
        "metadata:    who = test",
    ]


def test_info_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.mcap"
    fp = _tiny(path)
    code, out, _ = _run(capsys, "info", str(path), "--json")
    data = json.loads(out)
    del data["library"]
    assert (code, data) == (
        0,
        {
            "file": str(path),
            "simclock": True,
            "seed": 3,
            "contract_version": "1.0",
            "start_ns": 0,
            "end_ns": 9,
            "duration_ns": 9,
            "step_ns": 1,
            "message_count": 5,
            "topics": {"/a": 2, "/b": 1, "/cmd": 1, "/simclock/events": 1},
            "chunks": 1,
            "compression": "zstd",
            "draw_labels": [],
            "fingerprint": fp,
            "fingerprint_algorithm": "simclock-trace-v1/sha256",
            "metadata": {"who": "test"},
            "recovered": "",
            "container": "mcap",
            "note": "",
        },
    )


def test_replay_prints_total_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.mcap"
    _tiny(path)
    code, out, err = _run(capsys, "replay", str(path))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        '0 0 /a {"x":1}',
        "0 1 /b [1,2]",
        '5 2 /cmd "go"',
        '5 3 /simclock/events {"at_ns":5,"details":{"lag_ns":2},"kind":"PACING_LAG"}',
        '9 4 /a {"x":2}',
    ]
    code, out, _ = _run(capsys, "replay", str(path), "--topics", "/a", "/cmd", "--until", "5")
    assert (code, out.splitlines()) == (0, ['0 0 /a {"x":1}', '5 2 /cmd "go"'])
    assert _run(capsys, "replay", str(path), "--until", "0") == (
        0,
        '0 0 /a {"x":1}\n0 1 /b [1,2]\n',
        "",
    )


def test_replay_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.mcap"
    _tiny(path)
    code, out, _ = _run(capsys, "replay", str(path), "--json", "--until", "5")
    rows: list[dict[str, Any]] = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert rows[0] == {
        "kind": "json",
        "payload": {"x": 1},
        "sequence": 0,
        "stamp_ns": 0,
        "topic": "/a",
    }
    assert rows[3] == {
        "kind": "event",
        "payload": {"at_ns": 5, "details": {"lag_ns": 2}, "kind": "PACING_LAG"},
        "sequence": 3,
        "stamp_ns": 5,
        "topic": EVENTS_TOPIC,
    }
    assert len(rows) == 4


@pytest.mark.parametrize(("text", "ns"), [("5 ns", "5"), ("40 ms", "40000000"), ("0 s", "0")])
def test_replay_until_takes_the_time_strings_of_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, ns: str
) -> None:
    path = tmp_path / "t.mcap"
    _tiny(path)
    by_string = _run(capsys, "replay", str(path), "--until", text)
    assert by_string == _run(capsys, "replay", str(path), "--until", ns)
    assert by_string[0] == 0


def test_replay_until_5_ns_stops_after_the_messages_at_5_ns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.mcap"
    _tiny(path)
    everything = _run(capsys, "replay", str(path))[1].splitlines()
    shown = _run(capsys, "replay", str(path), "--until", "5 ns")[1].splitlines()
    assert shown == [line for line in everything if int(line.split()[0]) <= 5]
    assert 0 < len(shown) < len(everything)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("1.5", """expected a duration such as "7 ms" (units ns, us, ms, s), got '1.5'"""),
        ("-5 ms", """expected a duration such as "7 ms" (units ns, us, ms, s), got '-5 ms'"""),
        ("40 min", """expected a duration such as "7 ms" (units ns, us, ms, s), got '40 min'"""),
        ("4.5 ns", "'4.5 ns' is not a whole number of nanoseconds; refusing to round it"),
        (
            "18446744073709551616",
            "'18446744073709551616' is beyond 2**64 - 1 ns (about 584 years), the largest time-int",
        ),
    ],
)
def test_replay_refuses_bad_until_in_one_line_before_opening_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, problem: str
) -> None:
    missing = tmp_path / "missing.mcap"
    assert _run(capsys, "replay", str(missing), "--until", value) == (
        2,
        "",
        f"simclock replay: error: --until: {problem}\n",
    )


def test_C_X_FP_diff_identical_recordings_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    fp = _tiny(a)
    _tiny(b)
    assert _run(capsys, "diff", str(a), str(b)) == (
        0,
        f"identical: fingerprint {fp} (5 messages)\n",
        "",
    )


def test_C_X_FP_diff_reports_an_injected_one_message_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    fa = _tiny(a)
    fb = _tiny(b, cmd="stop")
    code, out, err = _run(capsys, "diff", str(a), str(b))
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "recordings differ at message #2 (0-based, in total order):",
        "  time:      A 5 ns | B 5 ns",
        "  sequence:  A 2 | B 2",
        "  topic:     A /cmd | B /cmd",
        '  payload A: "go"',
        '  payload B: "stop"',
        f"  fingerprints: A {fa} | B {fb}",
    ]


def test_C_X_FP_diff_reads_the_files_even_when_the_stored_fingerprints_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A message edited in the file (metadata untouched) was reported "identical" from the
    # stored fingerprints alone, although replay refuses that file.
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    fa = _tiny(a)

    inject = replace_in_data(b'"go"', b'"stop"')
    rewrite(a, b, inject)
    code, out, err = _run(capsys, "diff", str(a), str(b))
    # One chunk, held until B's end-of-file checks: B is refused before the compare.
    assert (code, out) == (2, "")
    assert re.fullmatch(
        rf"simclock diff: error: .*b\.mcap: offset \d+: the replayed trace has fingerprint "
        rf"[0-9a-f]{{64}} but the metadata records {fa}; the file was altered\n",
        err,
    ), err
    # Several chunks: the edited message is in the first one and is reported.
    a, b = tmp_path / "ra.mcap", tmp_path / "rb.mcap"
    live, fp, _ = record(a)
    rewrite(a, b, inject)
    at = next(i for i, m in enumerate(live) if m.payload == "go")
    code, out, err = _run(capsys, "diff", str(a), str(b))
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"recordings differ at message #{at} (0-based, in total order):",
        "  time:      A 8 ns | B 8 ns",
        f"  sequence:  A {live[at].sequence} | B {live[at].sequence}",
        "  topic:     A /cmd | B /cmd",
        '  payload A: "go"',
        '  payload B: "stop"',
        f"  fingerprints: A {fp} | B {fp}",
    ]


def test_C_X_FP_diff_compares_payloads_not_their_stored_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stored payload text spelled differently (a space before ``"go"``, the file resealed by a
    tool that means it) is the same message: diff compares the trace lines first and falls
    back to the payloads' canonical JSON where the lines differ."""
    import hashlib

    from simclock import RecordingError, RecordingReader

    a, b, draft = tmp_path / "a.mcap", tmp_path / "b.mcap", tmp_path / "draft.mcap"
    fa = _tiny(a)
    spaced = replace_in_data(b'"payload":"go"', b'"payload": "go"')
    rewrite(a, draft, spaced)
    with RecordingReader(draft) as reader, pytest.raises(RecordingError) as refused:
        list(reader.messages())  # the stored fingerprint no longer matches: read the new one
    found = re.search(r"the replayed trace has fingerprint ([0-9a-f]{64})", str(refused.value))
    assert found is not None
    fb = found.group(1)
    assert fb != fa
    refingerprint = resealed(
        lambda n, m: {**m, "fingerprint": fb} if n == "simclock" else m, {"who": "test"}
    )
    rewrite(a, b, spaced, metadata=refingerprint)
    with RecordingReader(b) as reader:
        assert [m.payload for m in reader.messages()] == [
            m.payload for m in RecordingReader(a).messages()
        ]
    assert hashlib.sha256(a.read_bytes()).digest() != hashlib.sha256(b.read_bytes()).digest()
    assert _run(capsys, "diff", str(a), str(b)) == (
        0,
        f"identical: fingerprint {fa} (5 messages)\n",
        "",
    )


def test_C_X_FP_diff_reports_a_missing_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    _tiny(a)
    _tiny(b, extra=True)
    code, out, _ = _run(capsys, "diff", str(a), str(b))
    assert code == 1
    assert out.splitlines()[:6] == [
        "recordings differ at message #5 (0-based, in total order):",
        "  time:      A (ended) | B 9 ns",
        "  sequence:  A (ended) | B 5",
        "  topic:     A (ended) | B /a",
        "  payload A: (ended)",
        '  payload B: {"x":3}',
    ]


def test_bad_file_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"nope")
    for argv in (["info", str(bad)], ["replay", str(bad)], ["diff", str(bad), str(bad)]):
        code, out, err = _run(capsys, *argv)
        assert (code, out) == (2, "")
        assert err == (
            f"simclock {argv[0]}: error: {bad}: offset 0: not an MCAP file (no MCAP magic at the "
            "start)\n"
        )


def test_replay_until_before_the_start_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "late.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=0, start_ns=5):
        bus.publish("/a", 1, stamp_ns=5)
    assert _run(capsys, "replay", str(path), "--until", "4") == (0, "", "")
    assert _run(capsys, "replay", str(path), "--until", "5") == (0, "5 0 /a 1\n", "")


def test_info_and_replay_of_a_foreign_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcap.writer import Writer

    path = tmp_path / "foreign.mcap"
    with path.open("wb") as f:
        w = Writer(f)
        w.start(profile="", library="other-writer")
        a = w.register_channel("/a", "json", 0)
        b = w.register_channel("/b", "cbor", 0)
        w.add_message(a, 100, b'{"v":1}', 100)
        w.add_message(b, 100, b"\xa0", 100)
        w.add_message(a, 250, b"[]", 250)
        w.finish()  # type: ignore[no-untyped-call]
    code, out, _ = _run(capsys, "info", str(path), "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["simclock"], data["library"], data["seed"], data["fingerprint"]) == (
        False,
        "other-writer",
        None,
        None,
    )
    assert (data["start_ns"], data["end_ns"], data["message_count"]) == (100, 250, 3)
    assert data["topics"] == {"/a": 2, "/b": 1}
    code, out, _ = _run(capsys, "info", str(path))
    assert "fingerprint: none stored (simclock diff computes one)" in out.splitlines()
    assert "messages:    3 messages (every channel), in 1 chunk (zstd)" in out.splitlines()
    # recover counts the same messages as info, for the copy it writes.
    saved = tmp_path / "saved.mcap"
    code, out, _ = _run(capsys, "recover", str(path), "-o", str(saved))
    assert (code, out) == (
        0,
        f"recovered {saved}: kept 3 messages up to 250 ns from 1 complete chunk of "
        "foreign.mcap; lost nothing (the file was complete)\n",
    )
    code, out, _ = _run(capsys, "info", str(saved))
    assert "messages:    3 messages (every channel), in 1 chunk (zstd)" in out.splitlines()
    code, out, _ = _run(capsys, "replay", str(path), "--json")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"kind": "json", "payload": {"v": 1}, "sequence": 0, "stamp_ns": 100, "topic": "/a"},
        {
            "kind": "raw",
            "payload": {"data": "a0", "encoding": "cbor", "schema": ""},
            "sequence": 1,
            "stamp_ns": 100,
            "topic": "/b",
        },
        {"kind": "json", "payload": [], "sequence": 2, "stamp_ns": 250, "topic": "/a"},
    ]
    assert _run(capsys, "diff", str(path), str(path)) == (0, "identical: same trace\n", "")


def _metadata_run(path: Path, *, seed: int, metadata: dict[str, str]) -> str:
    bus = Bus()
    with Recorder(path, bus, seed=seed, metadata=metadata) as rec:
        bus.publish("/a", {"x": 1}, stamp_ns=0)
        bus.publish("/a", {"x": seed}, stamp_ns=4)
    return rec.fingerprint()


def test_diff_says_how_the_metadata_differ_before_the_first_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    fa = _metadata_run(a, seed=7, metadata={"mode": "deterministic_ci", "who": "me"})
    fb = _metadata_run(b, seed=8, metadata={"mode": "unbounded", "site": "lab"})
    assert _run(capsys, "diff", str(a), str(b), "--no-progress") == (
        1,
        "recordings' metadata differ:\n"
        "  seed:          A 7 | B 8\n"
        "  metadata mode: A deterministic_ci | B unbounded\n"
        "  metadata site: A (absent) | B lab\n"
        "  metadata who:  A me | B (absent)\n"
        "recordings differ at message #1 (0-based, in total order):\n"
        "  time:      A 4 ns | B 4 ns\n"
        "  sequence:  A 1 | B 1\n"
        "  topic:     A /a | B /a\n"
        '  payload A: {"x":7}\n'
        '  payload B: {"x":8}\n'
        f"  fingerprints: A {fa} | B {fb}\n",
        "",
    )


def test_diff_of_identical_traces_with_different_metadata_exits_0_saying_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    fp = _metadata_run(a, seed=1, metadata={"mode": "realtime"})
    _metadata_run(b, seed=1, metadata={"mode": "unbounded"})
    assert _run(capsys, "diff", str(a), str(b), "--no-progress") == (
        0,
        "recordings' metadata differ:\n"
        "  metadata mode: A realtime | B unbounded\n"
        f"identical: fingerprint {fp} (2 messages)\n",
        "",
    )


def test_diff_names_differing_versions_and_a_foreign_files_missing_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A version key of the ``simclock`` record (resealed with another numpy), and a foreign
    copy of the same messages, which has no seed and no simclock record."""
    from mcap.writer import Writer

    a, b, c = tmp_path / "a.mcap", tmp_path / "b.mcap", tmp_path / "c.mcap"
    fp = _metadata_run(a, seed=2, metadata={})
    numpy = resealed(lambda n, m: {**m, "numpy": "0.0.1"} if n == "simclock" else m, None)
    rewrite(a, b, lambda data: data, metadata=numpy)
    from simclock import RecordingReader

    with RecordingReader(a) as reader:
        have = reader.info.metadata["numpy"]
    assert _run(capsys, "diff", str(a), str(b), "--no-progress") == (
        0,
        "recordings' metadata differ:\n"
        f"  version numpy: A {have} | B 0.0.1\n"
        f"identical: fingerprint {fp} (2 messages)\n",
        "",
    )
    with c.open("wb") as f:
        writer = Writer(f)
        writer.start(library="another writer")
        schema = writer.register_schema("x", "jsonschema", b"{}")
        channel = writer.register_channel("/a", "json", schema)
        writer.add_message(channel, 0, b'{"x":1}', 0)
        writer.add_message(channel, 4, b'{"x":2}', 4)
        writer.finish()  # type: ignore[no-untyped-call]
    code, out, err = _run(capsys, "diff", str(a), str(c), "--no-progress")
    assert (code, err) == (0, "")
    with RecordingReader(a) as reader:
        library = reader.info.library
    assert out == (
        "recordings' metadata differ:\n"
        "  seed:       A 2 | B (none)\n"
        f"  written by: A {library} | B another writer\n"
        f"identical: fingerprint {fp} (2 messages)\n"
    )
