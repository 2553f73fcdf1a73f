"""``simclock.run_in_child``: the one "run this again in another process" helper.

Used by the sweep audit (C-SWEEP-4) and the conformance suite's cross-process
clauses (C-DET-1, C-RNG-2). Checked against a real child interpreter: the hash
seed it gets, its stdin/stdout, and the evidence when it fails, crashes or
hangs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from simclock import SimclockTypeError, SimclockValueError
from simclock.lowlevel import SimclockChildError, run_in_child

_HELPER = """
import json, os, signal, sys, time
mode = sys.argv[1]
if mode == "echo":
    data = sys.stdin.buffer.read()
    print(json.dumps([os.environ["PYTHONHASHSEED"], hash("probe"), data.decode(), os.getcwd()]))
elif mode == "fail":
    print("line 1\\nline 2\\ndisk on fire", file=sys.stderr)
    sys.exit(3)
elif mode == "crash":
    print("about to crash", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "hang":
    print("waiting", file=sys.stderr, flush=True)
    time.sleep(60)
"""


@pytest.fixture()
def helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "childhelper.py").write_text(_HELPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "childhelper"


def test_runs_with_the_hash_seed_and_this_sys_path(helper: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    out = [
        json.loads(run_in_child(helper, ["echo"], hash_seed=s, what="echo", stdin=b"hi", cwd=work))
        for s in (1, 2, 1)
    ]
    assert [o[0] for o in out] == ["1", "2", "1"]
    assert out[0][1] == out[2][1] != out[1][1]  # the salt follows PYTHONHASHSEED
    assert out[0][2] == "hi"
    assert out[0][3] == str(work)


def test_a_failing_child_is_reported_with_its_status_and_stderr_tail(helper: str) -> None:
    with pytest.raises(SimclockChildError) as info:
        run_in_child(helper, ["fail"], hash_seed=5, what="the job")
    assert str(info.value) == (
        "the job in a child process (python -m childhelper, PYTHONHASHSEED=5) failed "
        "(exit status 3); stderr: line 1 / line 2 / disk on fire"
    )
    assert info.value.returncode == 3
    assert isinstance(info.value, RuntimeError)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_crashing_child_names_the_signal(helper: str) -> None:
    with pytest.raises(SimclockChildError, match=r"failed \(killed by SIGKILL\); stderr: about to"):
        run_in_child(helper, ["crash"], hash_seed=0, what="the job")


def test_a_hanging_child_is_killed_at_the_timeout(helper: str) -> None:
    with pytest.raises(SimclockChildError) as info:
        run_in_child(helper, ["hang"], hash_seed=0, what="the job", timeout_s=1.5)
    assert str(info.value).startswith(
        "the job in a child process (python -m childhelper, PYTHONHASHSEED=0) did not finish "
        "within 1.5 s and was killed; stderr: "
    )
    assert info.value.returncode is None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"module": "a b"}, SimclockValueError, r"^module must be a dotted module name, got 'a b'"),
        ({"args": "x"}, SimclockTypeError, r"^args must be a list or tuple of str, got 'x'$"),
        ({"hash_seed": "1"}, SimclockTypeError, r"^hash_seed must be an int, got '1'$"),
        ({"hash_seed": -1}, SimclockValueError, r"^hash_seed must be in 0\.\.4294967295"),
        ({"timeout_s": 0.5}, SimclockValueError, r"^timeout_s must be a finite number >= 1 "),
        ({"module": "no_such_module_here"}, SimclockValueError, r"cannot be found on this sys"),
        ({"stdin": "x"}, SimclockTypeError, r"^stdin must be bytes, got 'x'$"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    call: dict[str, object] = {"module": "json.tool", "args": [], "hash_seed": 0, "what": "x"}
    call.update(kwargs)
    with pytest.raises(error, match=message):
        run_in_child(**call)  # type: ignore[arg-type]
