"""Timeline plot of a recorded run: quantisation and latency on the physics grid (SPEC §7-§8).

`load_samples` reads the device samples (C-DEV-2) back from a recording
made by ``simclock run --out``; `plot_timeline` draws, for each device,
nominal vs actual acquisition and requested vs actual delivery over the grid
boundaries, so a 7 ms schedule on a 2 ms grid shows its quantisation at a
glance. matplotlib runs on the ``Agg`` backend (no display needed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from simclock.core._errors import SimclockValueError
from simclock.core._extras import require_extra
from simclock.core._names import describe_exception
from simclock.sim._devices import Sample
from simclock.sim._grid import format_ns

__all__ = ["Recording", "load_samples", "plot_timeline"]

# The figure is about 1 300 px wide: more boundary lines than this are sub-pixel,
# and a 1 ns grid over the default 40 ms window would be 40 million artists.
_MAX_GRID_LINES = 1_000

_SAMPLE_KEYS = frozenset(
    {
        "device",
        "index",
        "nominal_acquisition_ns",
        "acquisition_ns",
        "requested_delivery_ns",
        "delivery_ns",
    }
)


class Recording:
    """The parts of a recording the timeline needs: step, scenario name and samples."""

    def __init__(
        self,
        step_ns: int,
        name: str,
        samples: Sequence[Sample],
        order: Sequence[str] = (),
    ) -> None:
        self.step_ns = step_ns
        self.name = name
        self.samples = tuple(samples)
        self._order = tuple(order)

    @property
    def devices(self) -> tuple[str, ...]:
        """Device ids: the scenario's order when recorded, then order of first delivery."""
        seen = dict.fromkeys(s.device for s in self.samples)
        return tuple(dict.fromkeys([*(d for d in self._order if d in seen), *seen]))


def load_samples(path: str | os.PathLike[str]) -> Recording:
    """Read every device sample of an MCAP recording, in recorded (total) order.

    A sample is a JSON message whose payload has the keys of `Sample`.
    ``ValueError`` if the file is not a readable MCAP recording or has none.
    """
    from mcap.exceptions import McapError
    from mcap.records import Channel, Metadata
    from mcap.records import Message as McapMessage

    from simclock.recording._raw import RecordingError, records_in_file_order

    file = Path(path)
    step = 0
    name = file.stem
    samples: list[Sample] = []
    order: list[str] = []
    json_channels: set[int] = set()
    try:
        with file.open("rb") as stream:
            for _where, _in_chunk, record in records_in_file_order(str(file), stream):
                kind = type(record)
                if kind is McapMessage:
                    if record.channel_id not in json_channels:
                        continue
                    payload = json.loads(record.data).get("payload")
                    if isinstance(payload, dict) and payload.keys() >= _SAMPLE_KEYS:
                        samples.append(Sample.from_json(payload))
                elif kind is Channel:
                    if record.message_encoding == "json":
                        json_channels.add(record.id)
                elif kind is Metadata:
                    if record.name == "simclock":
                        step = int(record.metadata.get("step_ns", "0") or 0)
                    elif record.name == "simclock.user":
                        name = record.metadata.get("scenario", name)
                        order = list(json.loads(record.metadata.get("devices", "{}")))
    except OSError as exc:
        raise SimclockValueError(f"cannot read recording {str(file)!r}: {exc.strerror}") from None
    except RecordingError as exc:
        # One line naming the file and what the MCAP bytes failed with: the raw reader's
        # refusal keeps that failure as its context (PEP 415), else its text says it.
        cause = exc.__context__
        why = str(exc) if cause is None else describe_exception(cause)
        raise SimclockValueError(
            f"{str(file)!r} is not a readable MCAP recording ({why}); record one with "
            "simclock run SCENARIO --out run.mcap"
        ) from None
    except (McapError, ValueError, KeyError, TypeError) as exc:
        raise SimclockValueError(
            f"{str(file)!r} is not a simclock MCAP recording ({exc}); record one with "
            "simclock run SCENARIO --out run.mcap"
        ) from None
    except Exception as exc:
        # A short or damaged file fails inside the MCAP reader or a decompressor with
        # whatever that library raises (struct.error, ZstdError, ...): still a bad file.
        raise SimclockValueError(
            f"{str(file)!r} is not a readable MCAP recording ({describe_exception(exc)}); "
            "record one with simclock run SCENARIO --out run.mcap"
        ) from None
    if not samples:
        raise SimclockValueError(
            f"{str(file)!r} has no device samples; record a scenario with [devices.*] tables"
        )
    return Recording(step, name, samples, order)


def plot_timeline(
    recording: Recording,
    out: str | os.PathLike[str],
    *,
    start_ns: int = 0,
    span_ns: int = 40_000_000,
) -> int:
    """Draw the window ``[start_ns, start_ns + span_ns]`` to a PNG; return samples drawn.

    One band per device: the upper lane is acquisition (hollow circle: nominal
    time; filled circle: the boundary it ran at), the lower lane is delivery
    (hollow diamond: requested = nominal acquisition + latency; filled
    diamond: actual delivery); a grey segment joins each sample's actual
    acquisition to its actual delivery. Vertical lines are grid boundaries,
    drawn only when the window holds at most 1 000 of them (the title says so
    otherwise).
    """
    require_extra("plot", "plotting a timeline")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase

    # Checked before anything is drawn: matplotlib would refuse it only in savefig.
    suffix = Path(os.fspath(out)).suffix.lstrip(".").lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:  # no suffix: matplotlib writes PNG
        raise SimclockValueError(
            f"cannot write timeline {os.fspath(out)!r}: unknown image format {suffix!r}; "
            f"use one of {', '.join(sorted(formats))}, e.g. timeline.png"
        )

    end_ns = start_ns + span_ns
    ms = 1e6
    devices = recording.devices
    step = recording.step_ns
    height = 1.3 + 1.1 * len(devices)
    fig, ax = plt.subplots(figsize=(12, height), dpi=110)
    first = -(-start_ns // step) * step if step > 0 else 0
    dense = step > 0 and (end_ns - first) // step + 1 > _MAX_GRID_LINES
    if step > 0 and not dense:
        for boundary in range(first, end_ns + 1, step):
            ax.axvline(boundary / ms, color="0.88", linewidth=0.8, zorder=0)
    drawn = 0
    for row, device in enumerate(reversed(devices)):
        acq_y, del_y = row + 0.18, row - 0.18
        for s in recording.samples:
            if s.device != device or s.acquisition_ns > end_ns or s.delivery_ns < start_ns:
                continue
            drawn += 1
            nom, acq = s.nominal_acquisition_ns / ms, s.acquisition_ns / ms
            req, dlv = s.requested_delivery_ns / ms, s.delivery_ns / ms
            ax.plot([acq, dlv], [acq_y, del_y], color="0.7", linewidth=0.8, zorder=1)
            # An arrow from the nominal time to the actual one, where they differ.
            for actual, nominal, y, colour in (
                (acq, nom, acq_y, "tab:blue"),
                (dlv, req, del_y, "tab:orange"),
            ):
                if actual != nominal:
                    ax.annotate(
                        "",
                        xy=(actual, y),
                        xytext=(nominal, y),
                        arrowprops={"arrowstyle": "->", "color": colour, "lw": 0.9},
                    )
            ax.plot(nom, acq_y, "o", mfc="white", mec="tab:blue", ms=7, zorder=3)
            ax.plot(acq, acq_y, "o", color="tab:blue", ms=4, zorder=4)
            ax.plot(req, del_y, "D", mfc="white", mec="tab:orange", ms=6, zorder=3)
            ax.plot(dlv, del_y, "D", color="tab:orange", ms=3.5, zorder=4)
    ax.set_yticks(range(len(devices)), list(reversed(devices)))
    ax.set_ylim(-0.7, len(devices) - 0.3)
    ax.set_xlim(start_ns / ms - 0.5, end_ns / ms + 0.5)
    ax.set_xlabel("simulated time (ms); vertical lines: physics grid boundaries")
    grid = f"{format_ns(step)} grid" if step else "grid unknown"
    if dense:
        grid += " (boundaries too dense to draw)"
    ax.set_title(f"{recording.name}: acquisition (upper lane) and delivery (lower lane), {grid}")
    handles = [
        ax.plot([], [], "o", mfc="white", mec="tab:blue", label="nominal acquisition")[0],
        ax.plot([], [], "o", color="tab:blue", label="actual acquisition (boundary)")[0],
        ax.plot([], [], "D", mfc="white", mec="tab:orange", label="requested delivery")[0],
        ax.plot([], [], "D", color="tab:orange", label="actual delivery (boundary)")[0],
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=4)
    fig.tight_layout()
    try:
        fig.savefig(os.fspath(out))
    except OSError as exc:
        raise SimclockValueError(
            f"cannot write timeline {os.fspath(out)!r}: {exc.strerror}; "
            "write it into an existing, writable directory"
        ) from None
    finally:
        plt.close(fig)
    return drawn
