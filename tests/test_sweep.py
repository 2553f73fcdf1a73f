"""Sweeps on a real Dask cluster (SPEC §16, C-SWEEP-1..5).

One module-scoped cluster: a ``dask scheduler`` and two ``dask worker``
processes started here on 127.0.0.1 (random free port, no dashboard), torn
down in the fixture's ``finally``. Dask's nanny pins ``PYTHONHASHSEED`` of
every worker it starts (to 6640 unless configured): a hash-salted bug gives
the same wrong answer on every worker of a fleet, which is why the audit runs
seeds again under another ``PYTHONHASHSEED`` (C-SWEEP-4).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from test_sweep_helpers import failing_runner, salted_runner, write_short

import simclock
from simclock import RecordingReader, load_scenario, run_scenario
from simclock.sweeps import SweepAuditError

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
BIN = Path(sys.executable).parent
SEEDS = "0:24"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _connect(address: str) -> Any:
    """A Dask client (distributed's constructors are untyped)."""
    import distributed

    module: Any = distributed
    return module.Client(address, timeout="60s")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT)])
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` of a scheduler with two single-threaded workers."""
    logs = tmp_path_factory.mktemp("dask-logs")
    address = f"tcp://127.0.0.1:{_free_port()}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            subprocess.Popen(
                [
                    str(BIN / "dask"),
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    address.rsplit(":", 1)[1],
                    "--no-dashboard",
                ],
                env=_env(),
                stdout=subprocess.DEVNULL,
                stderr=(logs / "scheduler.log").open("wb"),
            )
        )
        for name in ("w0", "w1"):
            procs.append(
                subprocess.Popen(
                    [
                        str(BIN / "dask"),
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        name,
                    ],
                    env=_env(),
                    stdout=subprocess.DEVNULL,
                    stderr=(logs / f"{name}.log").open("wb"),
                )
            )
        with _connect(address) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_short(tmp_path_factory.mktemp("scenario"))


@pytest.fixture(scope="module")
def reference(cluster: str, short: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of SEEDS run once on the cluster: the table every other way must equal."""
    out = tmp_path_factory.mktemp("reference")
    simclock.sweep(short, SEEDS, out=out, scheduler=cluster)
    return out


def _rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(out / "sweep.parquet").to_pylist()
    return rows


def _timing(out: Path) -> list[list[str]]:
    return [line.split(",") for line in (out / "timing.csv").read_text().splitlines()[1:]]


def test_C_SWEEP_1_C_SWEEP_2_local_cluster_and_remote_cluster_write_identical_bytes(
    cluster: str, short: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import distributed

    made: list[dict[str, Any]] = []
    real: Any = distributed.LocalCluster

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", spy)
    local = simclock.sweep(short, SEEDS, out=tmp_path / "local")
    # C-SWEEP-2: by default a LocalCluster of one single-threaded worker process per core.
    assert made == [
        {
            "n_workers": os.cpu_count(),
            "threads_per_worker": 1,
            "processes": True,
            "host": "127.0.0.1",
            "dashboard_address": None,
            "scheduler_kwargs": {"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            "silence_logs": logging.ERROR,
            # No dashboard diagnostics on the workers (they take the GIL from the runs).
            "config": {
                "distributed.worker.profile.enabled": False,
                "distributed.admin.tick.interval": "1s",
                "distributed.admin.system-monitor.interval": "5s",
                "distributed.admin.system-monitor.disk": False,
                "distributed.worker.memory.monitor-interval": "1s",
            },
        }
    ]
    for name in ("sweep.parquet", "sweep.csv"):
        assert (tmp_path / "local" / name).read_bytes() == (reference / name).read_bytes()
    assert local.to_pylist() == _rows(reference)
    assert [r["seed"] for r in local.to_pylist()] == list(range(24))
    # Rows are the runs themselves: the same as running the seed here, in this process.
    scenario = load_scenario(short)
    for row in local.to_pylist()[:3]:
        result = run_scenario(scenario, seed=row["seed"])
        assert row["fingerprint"] == result.fingerprint
        assert row["messages"] == result.messages
        assert row["metric.noise_rms"] == result.metrics["noise_rms"]
        assert row["metric.enc_late"] == result.metrics["enc_late"]
    # Where runs happened lives in timing.csv only: the cluster's two workers.
    with _connect(cluster) as client:
        addresses = set(client.scheduler_info()["workers"])
    timing = _timing(reference)
    assert sorted(int(t[0]) for t in timing) == list(range(24))
    assert {t[2] for t in timing} <= addresses
    assert "tcp://" not in (reference / "sweep.csv").read_text()


def test_C_SWEEP_2_short_runs_are_sent_in_batches_each_seed_once(
    cluster: str, short: Path, reference: Path, tmp_path: Path
) -> None:
    import distributed

    dask: Any = distributed
    with _connect(cluster) as client, dask.get_task_stream(client) as stream:
        table = simclock.sweep(short, SEEDS, out=tmp_path / "batched", scheduler=cluster)
    # The scheduler's task stream, collected when the block ends.
    tasks = [t for t in stream.data if str(t["key"]).startswith("run_seeds-")]
    assert table.to_pylist() == _rows(reference)
    # The first task per slot (2 workers x 2) holds one seed; runs of a few ms are then
    # grouped, so there are fewer tasks than seeds; every seed ran exactly once.
    assert 4 < len(tasks) < 24
    assert sorted(int(t[0]) for t in _timing(tmp_path / "batched")) == list(range(24))


def test_C_SWEEP_1_C_SWEEP_5_two_parts_in_reverse_order_give_the_same_table(
    cluster: str, short: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "parts"
    first = simclock.sweep(short, "12:24", out=out, scheduler=cluster)
    assert [r["seed"] for r in first.to_pylist()] == list(range(12, 24))
    whole = simclock.sweep(short, SEEDS, out=out, scheduler=cluster)
    assert whole.to_pylist() == _rows(reference)
    for name in ("sweep.parquet", "sweep.csv"):
        assert (out / name).read_bytes() == (reference / name).read_bytes()
    # The second call ran only the seeds the table lacked (C-SWEEP-5).
    ran = [int(t[0]) for t in _timing(out)]
    assert sorted(ran[:12]) == list(range(12, 24))
    assert sorted(ran[12:]) == list(range(12))
    assert not (out / "rows.partial.jsonl").exists()


def test_C_SWEEP_3_a_raising_run_is_an_error_row_and_the_others_go_on(
    cluster: str, short: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "failing"
    table = simclock.sweep(
        short, "0:10", out=out, scheduler=cluster, runner=failing_runner, record="failing"
    )
    ref = {r["seed"]: r for r in _rows(reference)}
    for row in table.to_pylist():
        seed = row["seed"]
        if seed % 5 == 3:
            assert row == {
                **{k: None for k in row},
                "seed": seed,
                "status": "error",
                "message": f"ValueError: planted failure at seed {seed}",
            }
        else:
            assert row == ref[seed]
    # --record failing keeps every failing run's recording, and only those.
    failing = {r["seed"] for r in table.to_pylist() if r["status"] == "error"}
    assert {3, 8} <= failing
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(
        f"seed-{s}.mcap" for s in failing
    )
    with RecordingReader(out / "runs" / "seed-3.mcap") as reader:
        assert reader.info.fingerprint == run_scenario(load_scenario(short), seed=3).fingerprint


def test_C_SWEEP_3_cli_failing_seed_reproduced_locally_and_diffed(
    cluster: str, short: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cli"
    proc = subprocess.run(
        [
            str(BIN / "simclock"),
            "sweep",
            str(short),
            "--seeds",
            "0:8",
            "--scheduler",
            cluster,
            "--record",
            "failing",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        check=False,
        cwd=tmp_path,
    )
    ref = [r for r in _rows(reference) if r["seed"] < 8]
    bad = [r for r in ref if r["status"] == "error"]
    assert bad, "the short scenario's bound must fail some of seeds 0..7"
    assert proc.returncode == 1, proc.stderr
    # Not a terminal: no progress bar, nothing on stderr.
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0] == f"sweep: short, 8 seeds in the table, {8 - len(bad)} ok, {len(bad)} error"
    assert lines[1] == f"table: {out}/sweep.parquet {out}/sweep.csv"
    assert lines[2] == f"  seed {bad[0]['seed']}: {bad[0]['message']}"
    seed = bad[0]["seed"]
    assert lines[-1] == f"reproduce: simclock run {short} --seed {seed} --out seed-{seed}.mcap"
    run = subprocess.run(
        [
            str(BIN / "simclock"),
            "run",
            str(short),
            "--seed",
            str(seed),
            "--out",
            f"seed-{seed}.mcap",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    # The failing seed fails visibly: the sweep row's message, exit 1 (a broken bound).
    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout.splitlines()[-2:] == [
        f"failed: {bad[0]['message']}",
        f"fingerprint: {bad[0]['fingerprint']}",
    ]
    diff = subprocess.run(
        [
            str(BIN / "simclock"),
            "diff",
            str(out / "runs" / f"seed-{seed}.mcap"),
            f"seed-{seed}.mcap",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert diff.returncode == 0
    assert (
        diff.stdout
        == f"identical: fingerprint {bad[0]['fingerprint']} ({bad[0]['messages']} messages)\n"
    )


def test_C_SWEEP_4_audit_catches_a_hash_salted_component(
    cluster: str, short: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit"
    with pytest.raises(SweepAuditError) as info:
        simclock.sweep(short, "0:10", out=out, scheduler=cluster, runner=salted_runner, audit=1)
    error = info.value
    assert error.seed == 5  # audit=1: the middle of 0..9
    with _connect(cluster) as client:
        [pinned] = set(client.run(lambda: os.environ.get("PYTHONHASHSEED")).values())
    audit_seed = "2" if pinned == "1" else "1"
    lines = str(error).splitlines()
    assert lines[0].startswith(
        "audit failed: seed 5 gave another result when run again in another process "
        f"(PYTHONHASHSEED={audit_seed} vs {pinned}); columns that differ: "
    )
    assert "fingerprint" in lines[0].split("columns that differ: ")[1].split(", ")
    assert lines[1].startswith("  sweep: fingerprint ")
    assert lines[2].startswith("  audit: fingerprint ")
    assert (
        lines[1][len("  sweep: fingerprint ") :][:64]
        != lines[2][len("  audit: fingerprint ") :][:64]
    )
    # The first diverging message is the first noisy sample: the tick before it agrees.
    assert lines[3].startswith("  first divergence at message #")
    assert lines[4].startswith("    sweep: ") and " /sensors/imu0 json " in lines[4]
    assert lines[5].startswith("    audit: ") and " /sensors/imu0 json " in lines[5]
    assert lines[4].split()[1:3] == lines[5].split()[1:3]  # same stamp and sequence
    # The table is written before the audit: the sweep's rows are kept.
    assert [r["seed"] for r in _rows(out)] == list(range(10))


def test_C_SWEEP_4_audit_of_a_deterministic_scenario_passes(
    cluster: str, short: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit-ok"
    table = simclock.sweep(short, SEEDS, out=out, scheduler=cluster, audit=2)
    assert table.to_pylist() == _rows(reference)
    audited = sorted(int(t[0]) for t in _timing(out) if t[1] == "audit")
    assert audited == [0, 23]


def _complete_seeds(partial: Path) -> set[int]:
    seeds = set()
    for line in partial.read_text().splitlines():
        try:
            seeds.add(json.loads(line)["seed"])
        except json.JSONDecodeError:
            continue
    return seeds


def test_C_SWEEP_5_killed_sweep_restarts_with_the_missing_seeds_only(
    cluster: str, short: Path, tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    cmd = [
        str(BIN / "simclock"),
        "sweep",
        str(short),
        "--seeds",
        "0:60",
        "--scheduler",
        cluster,
        "--out",
        str(out),
        "--no-progress",
    ]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = out / "rows.partial.jsonl"
    try:
        # Wait for some flushed rows: at most 6000 polls of 20 ms, the wait being the child's.
        for _ in range(6000):
            if partial.exists() and len(_complete_seeds(partial)) >= 5:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.02)
            assert proc.returncode is None, "the sweep ended before it could be killed"
        else:
            pytest.fail("the sweep flushed no rows")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = _complete_seeds(partial)
    assert 5 <= len(done) < 60
    assert not (out / "sweep.parquet").exists()
    before = len(_timing(out))
    again = subprocess.run(cmd, env=_env(), capture_output=True, text=True, check=False)
    assert again.returncode in (0, 1), again.stderr
    rerun = [int(t[0]) for t in _timing(out)[before:]]
    assert sorted(rerun) == sorted(set(range(60)) - done)
    whole = simclock.sweep(short, "0:60", out=tmp_path / "whole", scheduler=cluster)
    assert _rows(out) == whole.to_pylist()
    for name in ("sweep.parquet", "sweep.csv"):
        assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def test_C_SWEEP_5_ctrl_c_ends_with_one_line_and_keeps_the_rows(
    cluster: str, short: Path, tmp_path: Path
) -> None:
    out = tmp_path / "interrupted"
    cmd = [
        str(BIN / "simclock"),
        "sweep",
        str(short),
        "--seeds",
        "0:600",  # far more than can finish before the interrupt, even on a fast machine
        "--scheduler",
        cluster,
        "--out",
        str(out),
    ]
    # Started as from a terminal, where Ctrl-C reaches a process whose SIGINT is at its
    # default: a test run started in the background by a shell without job control
    # (`make test &` in a script) ignores SIGINT, every child inherits that, and the
    # sweep then rightly ignores the interrupt too.
    as_from_a_terminal = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", as_from_a_terminal, *cmd],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    partial = out / "rows.partial.jsonl"
    try:
        for _ in range(6000):
            if partial.exists() and len(_complete_seeds(partial)) >= 3:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.02)
            assert proc.returncode is None, "the sweep ended before it could be interrupted"
        else:
            pytest.fail("the sweep flushed no rows")
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()
    # One comparison, so a failure shows what the command printed.
    assert (proc.returncode, stdout, stderr.decode()) == (
        130,
        b"",
        f"simclock sweep run: interrupted; finished rows are kept in {out}: "
        "run the same command to resume\n",
    )
    assert len(_complete_seeds(partial)) >= 3


def test_C_SWEEP_1_the_client_reads_the_model_file_once_and_the_rows_are_the_runs(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (ROOT / "examples" / "pendulum.toml").read_text()
    (tmp_path / "pendulum.toml").write_text(text.replace('duration = "10 s"', 'duration = "20 ms"'))
    model = tmp_path / "pendulum.xml"
    model.write_bytes((ROOT / "examples" / "pendulum.xml").read_bytes())
    scenario = load_scenario(tmp_path / "pendulum.toml")
    reads: list[Path] = []
    original = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    table = simclock.sweep(scenario, "0:4", out=tmp_path / "out", scheduler=cluster)
    # One read makes the directory's digest and the bytes the workers run (not one each).
    assert reads.count(model) == 1
    monkeypatch.undo()
    assert [(r["seed"], r["fingerprint"]) for r in table.to_pylist()] == [
        (seed, run_scenario(scenario, seed=seed).fingerprint) for seed in range(4)
    ]
