"""``make demo``: the Phase-1 loop of the clock spec.

A 200 Hz controller and a 50 Hz telemetry flush on a deterministic clock driven
in 1 ms steps for 10 simulated seconds, with IMU noise drawn from the stream
``/sensors/imu0/noise``. Prints firings per callback, the final time and the
first random numbers; the same seed prints the same summary on every machine.
"""

from __future__ import annotations

from collections import Counter

from simclock._heapclock import HeapSimClock

__all__ = ["main"]

END_NS = 10_000_000_000
STEP_NS = 1_000_000


def main(seed: int = 42) -> int:
    """Run the loop and print the summary; returns 0."""
    clock = HeapSimClock(seed, step_ns=STEP_NS)
    noise = clock.random_source().child("/sensors/imu0/noise")
    fired: Counter[str] = Counter()
    samples: list[float] = []

    def controller_tick() -> None:
        fired["controller.tick (200 Hz)"] += 1
        samples.extend(float(x) for x in noise.normal(0.0, 0.05, size=3))

    def telemetry_flush() -> None:
        fired["telemetry.flush_tick (50 Hz)"] += 1

    clock.schedule_periodic(5_000_000, controller_tick)
    clock.schedule_periodic(20_000_000, telemetry_flush)
    while clock.now_ns() < END_NS:
        clock.advance(clock.step_ns())

    print(f"seed={seed} final now_ns={clock.now_ns()} ({clock.now_ns() / 1e9:.3f} s)")
    for name, count in sorted(fired.items()):
        print(f"  {name}: {count} firings")
    print("  first IMU noise draws:", ", ".join(f"{x:+.6f}" for x in samples[:6]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
