"""SCK201: ``.child()`` called with a non-constant label.

What it does:
    Flags ``x.child(label)`` whose label is not a string literal: f-strings
    with placeholders, ``+`` with a non-literal, ``%``, ``.format()``, calls,
    variables. A literal, a concatenation of literals, or a module-level name
    bound once to a string literal is fine. Applies to simulation code, as
    SCK301 and SCK401 do (C-LINT-1): every file that imports simclock, and
    every file the configuration declares (``simulation-code`` globs,
    ``simulation-imports``), such as a module that is handed a stream and
    never imports simclock. Elsewhere ``element.child(tag)`` of an unrelated
    API is never flagged.

Why:
    A stream's numbers are a function of its label path (C-RNG-2, C-RNG-3).
    A label built at run time makes the set of streams depend on data and
    iteration order, so adding a sensor or reordering a loop silently changes
    the numbers of others, and the label tree can no longer be read from the
    code.

Example:
    for i, cam in enumerate(cameras):
        cam.rng = root.child(f"/sensors/cam{i}/dropout")

Use instead:
    front = root.child("/sensors/cam_front/dropout")
    rear = root.child("/sensors/cam_rear/dropout")
    # a genuinely data-driven tree: build it in one place and mark it
    # ``# noqa: SCK201`` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from simclock_lint._rule import DECLARED, Rule

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK201"
MESSAGE = "non-constant label in `{name}`; use a string literal so the stream tree is static"

VALID = [
    "import simclock\nnoise = root.child('/sensors/imu0/noise')",
    "import simclock\nnoise = root.child('/sensors' '/imu0')",
    "import simclock\nnoise = root.child('/sensors' + '/imu0')",
    "import simclock\nLABEL = '/planner'\nrng = root.child(LABEL)",
    "import simclock\nrng = root.child(label='/planner')",
    "import simclock\nrng = root.child(f'/static')",
    "import simclock\ntext = 'root.child(name)'  # root.child(name)",
    "tag = element.child(tag_name)",
    # Not simulation code: no simclock import, not declared.
    "def make(root, i):\n    return root.child(f'/cam{i}')",
    DECLARED + "def make(root):\n    return root.child('/cam_front')",
]
INVALID = [
    "import simclock\nrng = root.child(f'/sensors/cam{i}')",
    "import simclock\nrng = root.child('/sensors/' + name)",
    "import simclock\nrng = root.child('/sensors/%s' % name)",
    "import simclock\nrng = root.child('/sensors/{}'.format(name))",
    "import simclock\nrng = root.child(name)",
    "import simclock\nrng = root.child(label=name)",
    "import simclock\nLABEL = '/a'\nLABEL = '/b'\nrng = root.child(LABEL)",
    "import simclock\ndef f(LABEL):\n    return root.child(LABEL)",
    "import simclock\nrng = root.child(*parts)",
    # Declared simulation code that is handed a stream and never imports simclock.
    DECLARED + "def make(root, i):\n    return root.child(f'/cam{i}')",
    DECLARED + "def noise(clock, name):\n    return clock.random_source().child(name)",
]


_LABEL_NAME = re.compile(r"\bchild\s*\(\s*(?:label\s*=\s*)?([A-Za-z_]\w*)")


_CHILD_CALL = re.compile(rb"\.\s*child\s*\(")


def may_match(source: bytes) -> bool:
    # Whether the file is simulation code is the engine's one decision (C-LINT-1).
    return b"child" in source and _CHILD_CALL.search(source) is not None


def words(text: str) -> set[str]:
    """``child`` and every bare name passed as a label (its bindings decide)."""
    return {"child", *_LABEL_NAME.findall(text)}


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    import libcst

    from simclock_lint._analysis import keyword_args, positional_args

    for name, call in analysis.calls:
        if name != "child" or not isinstance(call.func, libcst.Attribute):
            continue
        positional = positional_args(call)
        if positional:
            label: libcst.Arg | None = positional[0]
        else:
            label = next(
                (
                    k
                    for k in keyword_args(call)
                    if k.keyword is not None and k.keyword.value == "label"
                ),
                None,
            )
        if label is None:
            continue
        if label.star == "*":
            yield label, "child()"  # the position of the star, where the label starts
        elif not analysis.is_constant_label(label.value):
            yield label.value, "child()"


RULE = Rule.declared_in(globals(), simulation_only=True, words=words, anchors=("child",))
