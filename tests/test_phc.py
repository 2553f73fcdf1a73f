"""PhcTimeSource: a PTP hardware clock read through its dynamic POSIX clock id (C-SYS-6).

The refusals run everywhere; the readings run where this machine has a PTP
hardware clock (``/dev/ptp*``) and skip with one reason elsewhere.
"""

from __future__ import annotations

import glob
import os
import time
from pathlib import Path

import pytest

import simclock
from simclock import PhcTimeSource, SimclockRuntimeError, SimclockTypeError
from simclock.realtime._phc import phc_clock_id

PHCS = sorted(glob.glob("/dev/ptp[0-9]*"))
needs_phc = pytest.mark.skipif(
    not PHCS, reason="no PTP hardware clock on this machine (ls /dev/ptp* lists none)"
)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


def test_C_SYS_6_the_dynamic_clock_id_is_the_kernels_fd_to_clockid() -> None:
    # include/linux/posix-timers.h: FD_TO_CLOCKID(fd) = ((~(clockid_t)(fd)) << 3) | CLOCKFD.
    assert phc_clock_id(3) == -29
    assert phc_clock_id(0) == -5
    assert phc_clock_id(1023) == ((~1023) << 3) | 3


def test_C_SYS_6_an_absent_device_is_refused_naming_the_path(tmp_path: Path) -> None:
    path = str(tmp_path / "ptp99")
    before = open_fds()
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^no PTP hardware clock at '.*/ptp99': the device does not exist; list this "
        r"machine's clocks with 'ls /dev/ptp\*' \(a network card with hardware timestamping "
        r"and its driver provide one\)$",
    ):
        PhcTimeSource(path)
    assert open_fds() == before


def test_C_SYS_6_a_file_that_is_no_clock_is_refused_and_closed(tmp_path: Path) -> None:
    plain = tmp_path / "not-a-clock"
    plain.write_bytes(b"")
    before = open_fds()
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^'.*/not-a-clock' is not a PTP hardware clock \(clock_gettime on its descriptor "
        r"failed: Invalid argument\); pass a /dev/ptpN device$",
    ):
        PhcTimeSource(str(plain))
    assert open_fds() == before  # the descriptor opened for the check was closed


def test_a_path_that_cannot_be_opened_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^cannot open the PTP hardware clock '/dev/ptp\\x000': embedded null byte; pass "
        r"the path of a /dev/ptpN device this process may read$",
    ):
        PhcTimeSource("/dev/ptp\x000")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", r"^path must be the path of a PTP hardware clock such as '/dev/ptp0', got ''$"),
        (
            b"/dev/ptp0",
            r"^path must be the path of a PTP hardware clock such as '/dev/ptp0', "
            r"got b'/dev/ptp0'$",
        ),
    ],
)
def test_a_path_that_is_no_str_is_refused(path: object, message: str) -> None:
    with pytest.raises(SimclockTypeError, match=message):
        PhcTimeSource(path)  # type: ignore[arg-type]


@needs_phc
def test_C_SYS_6_reads_the_hardware_clock() -> None:
    with PhcTimeSource(PHCS[0]) as phc:
        fd = os.open(PHCS[0], os.O_RDONLY)
        try:
            direct = time.clock_gettime_ns(phc_clock_id(fd))
        finally:
            os.close(fd)
        read = phc.now_ns()
        assert abs(read - direct) < 1_000_000_000  # the same clock, read twice
        values = [phc.now_ns() for _ in range(1000)]
        assert values == sorted(values)  # C-SYS-1
        clock = phc.clock(seed=1)
        assert clock.now_ns() >= values[-1]
    last = phc.now_ns()
    assert phc.now_ns() == last  # closed: held at the last value


@needs_phc
def test_C_SYS_6_periodic_thread_on_the_hardware_clock() -> None:
    with PhcTimeSource(PHCS[0]) as phc:
        clock = phc.clock(seed=1)
        fired: list[int] = []
        handle = simclock.schedule_periodic_thread(5_000_000, lambda: fired.append(1), clock)
        end = time.monotonic() + 20
        while len(fired) < 5 and time.monotonic() < end:
            time.sleep(0.005)
        handle.cancel()
        assert len(fired) >= 5
