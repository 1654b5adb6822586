#!/usr/bin/env python3
"""Roofline plot of a ridgec roofline report.

Reads the JSON that `ridgec MODEL.onnx --report=json -o FILE` writes and draws
the classic roofline: log-log, arithmetic intensity (FLOP/byte) against
attained performance (FLOP/s), under the memory roof (bandwidth * intensity)
and the two flat compute roofs, one point per ONNX node (or per kernel):

    roofline_plot.py REPORT.json -o OUT_PREFIX [--title T] [--label-top N]
                     [--kernels]       writes OUT_PREFIX.svg and OUT_PREFIX.png
    roofline_plot.py --check REPORT.json
                     validates the report only; exit status 0 or 1

Points are coloured by op type (a kernel by the op type of its most expensive
node), their area is proportional to their share of the predicted time, and
the N most expensive ones are labelled with their node name. Points of one op
type on the same spot, as a block repeated N times gives, are merged into one
("+N more"). Entries with zero FLOP or zero bytes have no place on log axes;
they are left out and counted in a note on the figure.

The report schema ("ridgeline-roofline/1"):

    {
      "schema": "ridgeline-roofline/1",
      "model": "path/to/model.onnx",
      "gpu": {"name": "H100-SXM", "precision": "bf16",
              "peak_flops": 9.894e14,       # tensor-core peak at `precision`, FLOP/s
              "simt_peak_flops": 6.69e13,   # fp32 SIMT (CUDA core) peak, FLOP/s
              "bandwidth": 3.35e12,         # device memory, bytes/s
              "ridge_point": 295.3},        # peak_flops / bandwidth, FLOP/byte
      "ops": [ {"name": "/h.0/attn/MatMul",  # ONNX node name
                "op": "MatMul",             # ONNX op type
                "ridge_op": "ridge.matmul",
                "shapes": "1x4x128x64, 1x4x64x128 -> 1x4x128x128",
                "flops": 8388608, "bytes": 393216,  # integers
                "intensity": 21.33,         # flops / bytes (0 when bytes == 0)
                "ceiling": "tensor",        # "tensor" (tensor cores) or "simt" (CUDA cores)
                "precision": "bf16",        # the format the op computes in
                "ceiling_flops": 9.894e14,  # its compute ceiling, FLOP/s
                "bound": "memory",          # "memory" or "compute"
                "time_s": 1.17e-07,         # max(flops / ceiling_flops, bytes / bandwidth)
                "share": 0.0123 } ... ],    # time_s / total.time_s
      "kernels": [ ... ],                   # optional: like ops, but with
                                            # "nodes": [node names] instead of
                                            # "op", "ridge_op" and "shapes"
      "total": {"flops": ..., "bytes": ..., "time_s": ..., "intensity": ...,
                "memory_bound_time_share": 0.93}
    }

`validate_report(report)` checks the field types and that the numbers agree
with each other (to a relative 1e-6): intensity, time_s, bound and share of
every entry, the GPU's ridge point, and the totals as sums over `ops`. It
returns the list of problems, each naming the field (`ops[3].bound: ...`).

Only the standard library is needed for --check; plotting needs matplotlib,
which is imported only then (Debian: python3-matplotlib).
"""

import argparse
import json
import math
import os
import re
import sys

SCHEMA = "ridgeline-roofline/1"

# The report is written with round-trip precision, so the derived fields must
# agree with what they are derived from up to floating-point summation noise.
REL_TOL = 1e-6

# Marker area in pt^2 of an entry that takes all of the predicted time. The
# scale is absolute rather than relative to the largest point so that plots
# of different models can be compared by eye.
FULL_SHARE_AREA = 2400.0
# Tiny entries must still be visible.
MIN_AREA = 18.0

# Matplotlib's tab10 followed by the darker half of tab20b: 20 colours that
# stay distinguishable on white.
PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
    "#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194",
]
# The heavy hitters keep the same colour in every plot, so that two plots can
# be compared at a glance; other op types take the remaining colours.
FIXED_COLOURS = {
    "MatMul": 0, "Softmax": 1, "LayerNormalization": 2, "Add": 3, "Mul": 4,
    "Transpose": 5, "Tanh": 6, "Gemm": 8, "Conv": 9,
}


class ReportError(Exception):
    """A report that cannot be read or does not follow the schema."""

    def __init__(self, problems):
        super().__init__("\n".join(problems))
        self.problems = problems


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def _close(a, b):
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def _is_number(value):
    # bool is an int subclass, but `true` is never a count.
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


class _Validator:
    """Collects problems instead of stopping at the first one, so that one
    --check run shows everything a report writer has to fix."""

    def __init__(self):
        self.problems = []

    def error(self, path, message):
        self.problems.append("%s: %s" % (path, message))

    def field(self, obj, path, key, kind):
        """Returns obj[key] if it has the expected kind, else None (after
        recording why). `kind` is a type name or a tuple of allowed strings."""
        where = "%s.%s" % (path, key) if path else key
        if key not in obj:
            self.error(where, "missing")
            return None
        value = obj[key]
        if isinstance(kind, tuple):
            if value not in kind:
                self.error(where, "expected %s, got %s" % (
                    " or ".join('"%s"' % k for k in kind), json.dumps(value)))
                return None
            return value
        ok, expected = {
            "string": (lambda v: isinstance(v, str), "a string"),
            "object": (lambda v: isinstance(v, dict), "an object"),
            "list": (lambda v: isinstance(v, list), "a list"),
            "count": (lambda v: isinstance(v, int) and not isinstance(v, bool)
                      and v >= 0, "a non-negative integer"),
            "nonneg": (lambda v: _is_number(v) and v >= 0,
                       "a non-negative number"),
            "positive": (lambda v: _is_number(v) and v > 0,
                         "a positive number"),
            "fraction": (lambda v: _is_number(v) and 0 <= v <= 1,
                         "a number in [0, 1]"),
        }[kind]
        if not ok(value):
            self.error(where, "expected %s, got %s" % (expected, json.dumps(value)))
            return None
        return value

    def consistent(self, path, key, actual, expected, formula):
        if actual is not None and not _close(actual, expected):
            self.error("%s.%s" % (path, key) if path else key,
                       "%r != %s = %r" % (actual, formula, expected))


def _check_entry(v, entry, path, gpu, total_time, is_kernel):
    """Checks one `ops` or `kernels` element; returns (time_s, bound) when
    both are usable, for the totals."""
    if not isinstance(entry, dict):
        v.error(path, "expected an object")
        return None, None
    v.field(entry, path, "name", "string")
    if is_kernel:
        nodes = v.field(entry, path, "nodes", "list")
        for i, node in enumerate(nodes or []):
            if not isinstance(node, str):
                v.error("%s.nodes[%d]" % (path, i), "expected a string")
    else:
        for key in ("op", "ridge_op", "shapes"):
            v.field(entry, path, key, "string")
    flops = v.field(entry, path, "flops", "count")
    nbytes = v.field(entry, path, "bytes", "count")
    intensity = v.field(entry, path, "intensity", "nonneg")
    ceiling = v.field(entry, path, "ceiling", ("tensor", "simt"))
    # The entry's own format and ceiling; reports written before they were
    # added are still valid, and are checked against the GPU's peaks.
    precision = ceiling_flops = None
    if "precision" in entry:
        precision = v.field(entry, path, "precision", "string")
    if "ceiling_flops" in entry:
        ceiling_flops = v.field(entry, path, "ceiling_flops", "positive")
    bound = v.field(entry, path, "bound", ("memory", "compute"))
    time_s = v.field(entry, path, "time_s", "nonneg")
    share = v.field(entry, path, "share", "fraction")

    if flops is None or nbytes is None:
        return time_s, bound
    v.consistent(path, "intensity", intensity,
                 flops / nbytes if nbytes else 0.0,
                 "flops / bytes" if nbytes else "0 (bytes == 0)")
    if gpu is None or ceiling is None:
        return time_s, bound

    peak_key = "peak_flops" if ceiling == "tensor" else "simt_peak_flops"
    if ceiling_flops is not None:
        # SIMT work, and tensor-core work in the report's precision, run at
        # the GPU's peaks; tensor cores of another format (an fp16 model in
        # a bf16 report) at their own.
        if ceiling == "simt" or precision == gpu.get("precision"):
            v.consistent(path, "ceiling_flops", ceiling_flops, gpu[peak_key],
                         "gpu.%s" % peak_key)
        peak, peak_name = ceiling_flops, "ceiling_flops"
    else:
        peak, peak_name = gpu[peak_key], "gpu.%s" % peak_key
    compute_s = flops / peak
    memory_s = nbytes / gpu["bandwidth"]
    v.consistent(path, "time_s", time_s, max(compute_s, memory_s),
                 "max(flops / %s, bytes / gpu.bandwidth)" % peak_name)
    # Within the tolerance the two terms tie and either bound is right.
    if bound is not None and not _close(compute_s, memory_s):
        expected = "compute" if compute_s > memory_s else "memory"
        if bound != expected:
            v.error("%s.bound" % path,
                    '"%s", but flops / %s = %.6g s %s bytes / gpu.bandwidth'
                    " = %.6g s" % (bound, peak_name, compute_s,
                                   ">" if compute_s > memory_s else "<",
                                   memory_s))
    # Kernel shares may be taken against the kernels' own total (fusion
    # changes the sum), so only ops' shares are pinned down.
    if not is_kernel and time_s is not None and total_time is not None:
        v.consistent(path, "share", share,
                     time_s / total_time if total_time else 0.0,
                     "time_s / total.time_s")
    return time_s, bound


def validate_report(report):
    """Returns the list of problems with `report` (parsed JSON); empty when it
    follows the schema and its numbers are consistent."""
    v = _Validator()
    if not isinstance(report, dict):
        v.error("(top level)", "expected an object")
        return v.problems
    schema = v.field(report, "", "schema", "string")
    if schema is not None and schema != SCHEMA:
        # Another version means other fields; checking them is pointless.
        v.error("schema", 'expected "%s", got %s' % (SCHEMA, json.dumps(schema)))
        return v.problems
    v.field(report, "", "model", "string")

    gpu = v.field(report, "", "gpu", "object")
    if gpu is not None:
        v.field(gpu, "gpu", "name", "string")
        v.field(gpu, "gpu", "precision", "string")
        rates = [v.field(gpu, "gpu", key, "positive")
                 for key in ("peak_flops", "simt_peak_flops", "bandwidth")]
        ridge = v.field(gpu, "gpu", "ridge_point", "positive")
        if None in rates:
            gpu = None  # Nothing can be checked against it.
        else:
            v.consistent("gpu", "ridge_point", ridge, rates[0] / rates[2],
                         "peak_flops / bandwidth")

    total = v.field(report, "", "total", "object")
    total_flops = total_bytes = total_time = memory_share = None
    if total is not None:
        total_flops = v.field(total, "total", "flops", "count")
        total_bytes = v.field(total, "total", "bytes", "count")
        total_time = v.field(total, "total", "time_s", "nonneg")
        total_intensity = v.field(total, "total", "intensity", "nonneg")
        memory_share = v.field(total, "total", "memory_bound_time_share",
                               "fraction")
        if total_flops is not None and total_bytes is not None:
            v.consistent("total", "intensity", total_intensity,
                         total_flops / total_bytes if total_bytes else 0.0,
                         "flops / bytes")

    ops = v.field(report, "", "ops", "list")
    if ops is not None:
        results = [_check_entry(v, op, "ops[%d]" % i, gpu, total_time, False)
                   for i, op in enumerate(ops)]
        # Sums only mean something when every term is there.
        if all(isinstance(op, dict) for op in ops):
            for key, value in (("flops", total_flops), ("bytes", total_bytes)):
                terms = [op.get(key) for op in ops]
                if all(isinstance(t, int) for t in terms):
                    v.consistent("total", key, value, sum(terms),
                                 "sum of ops[].%s" % key)
        times = [t for t, _ in results]
        if None not in times:
            v.consistent("total", "time_s", total_time, math.fsum(times),
                         "sum of ops[].time_s")
            if total_time is not None and None not in [b for _, b in results]:
                memory_time = math.fsum(t for t, b in results if b == "memory")
                v.consistent("total", "memory_bound_time_share", memory_share,
                             memory_time / total_time if total_time else 0.0,
                             'time share of ops[] with bound "memory"')

    if "kernels" in report:
        kernels = v.field(report, "", "kernels", "list")
        for i, kernel in enumerate(kernels or []):
            _check_entry(v, kernel, "kernels[%d]" % i, gpu, None, True)
    return v.problems


def load_report(path):
    """Reads and validates a report; raises ReportError."""
    try:
        with open(path) as f:
            report = json.load(f)
    except OSError as e:
        raise ReportError([e.strerror or str(e)])
    except ValueError as e:  # json.JSONDecodeError says line and column
        raise ReportError(["invalid JSON: %s" % e])
    problems = validate_report(report)
    if problems:
        raise ReportError(problems)
    return report


# ---------------------------------------------------------------------------
# Plotting
# ---------------------------------------------------------------------------


def _si(value, unit):
    """989.4e12, "FLOP/s" -> "989 TFLOP/s"."""
    for power, prefix in ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"),
                          (3, "k")):
        if value >= 10 ** power:
            return "%.3g %s%s" % (value / 10 ** power, prefix, unit)
    return "%.3g %s" % (value, unit)


def _duration(seconds):
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            return "%.3g %s" % (seconds / scale, unit)
    return "%.3g ns" % (seconds / 1e-9)


def _percent(share):
    if share >= 0.1:
        return "%.0f%%" % (share * 100)
    if share >= 0.001:
        return "%.1f%%" % (share * 100)
    return "<0.1%"


def _memory_kind(gpu_name):
    # Data-centre parts (A100, H100, H200, B200, GH200, ...) have HBM; for
    # anything else "DRAM" is the safe name.
    return "HBM" if re.match(r"(GB|GH)?[ABHPV]\d{3}\b", gpu_name) else "DRAM"


def _shorten(name, limit=44):
    # Node names grow at the front (/model/layers.11/...); the tail tells
    # which op it is.
    return name if len(name) <= limit else "…" + name[-(limit - 1):]


class _Point:
    """One marker: an op, a kernel, or several of them merged."""

    def __init__(self, name, category, flops, nbytes, time_s, bound):
        self.name = name
        self.category = category  # decides the colour
        self.flops = flops
        self.nbytes = nbytes
        self.time_s = time_s
        self.bound = bound
        self.share = 0.0  # of the plotted entries' time
        self.count = 1  # entries merged into this point
        self.area = 0.0  # marker area in pt^2

    @property
    def x(self):
        return self.flops / self.nbytes

    @property
    def y(self):
        return self.flops / self.time_s

    def label(self):
        more = " (+%d more)" % (self.count - 1) if self.count > 1 else ""
        return "%s%s  %s" % (_shorten(self.name), more, _percent(self.share))


def _merge_coincident(points):
    """Merges points of one category that land on the same spot.

    A model that repeats a block N times puts N identical points on top of
    each other: N labels would pile up on one spot, and N stacked markers
    would show one op's time share instead of their sum. Summing flops, bytes
    and time keeps the spot (both coordinates are ratios of those sums) and
    makes the marker area show the total; the label names the most expensive
    member and how many more there are.
    """
    merged = {}
    for e in sorted(points, key=lambda e: -e.time_s):
        key = (e.category, round(math.log10(e.x), 6), round(math.log10(e.y), 6))
        if key not in merged:
            merged[key] = _Point(e.name, e.category, e.flops, e.nbytes,
                                 e.time_s, e.bound)
            merged[key].share = e.share
            continue
        m = merged[key]
        m.flops += e.flops
        m.nbytes += e.nbytes
        m.time_s += e.time_s
        m.share += e.share
        m.count += 1
    return list(merged.values())


def _entries(report, kernels):
    """The entries to plot as _Points, and what they are called."""
    if not kernels:
        return ([_Point(op["name"], op["op"], op["flops"], op["bytes"],
                        op["time_s"], op["bound"]) for op in report["ops"]],
                "op")
    if "kernels" not in report:
        raise ReportError(["--kernels: the report has no \"kernels\" list "
                           "(this ridgec reports ops only)"])
    # A kernel is coloured by its most expensive node's op type: a fused
    # MatMul+Add+Tanh is a MatMul as far as the roofline is concerned.
    ops = {op["name"]: op for op in report["ops"]}
    points = []
    for kernel in report["kernels"]:
        members = [ops[n] for n in kernel["nodes"] if n in ops]
        category = (max(members, key=lambda op: op["time_s"])["op"]
                    if members else "other")
        points.append(_Point(kernel["name"], category, kernel["flops"],
                             kernel["bytes"], kernel["time_s"], kernel["bound"]))
    return points, "kernel"


def _colours(categories):
    """A colour per category: the fixed one for common op types, else the
    free palette entries in the given order (by time), cycling past 20."""
    colours = {c: PALETTE[FIXED_COLOURS[c]] for c in categories
               if c in FIXED_COLOURS}
    taken = {FIXED_COLOURS[c] for c in colours}
    # tab10 before the darker tab20b, and grey (7) last: it reads as
    # "unimportant".
    free = [i for i in [0, 1, 2, 3, 4, 5, 6, 8, 9] + list(range(10, 20)) + [7]
            if i not in taken]
    others = [c for c in categories if c not in colours]
    for n, category in enumerate(others):
        colours[category] = PALETTE[free[n % len(free)]]
    return colours


def _text_box(text, renderer):
    """The box of the text alone: an Annotation's own extent includes its
    leader line, which would block everything between label and point."""
    from matplotlib.text import Annotation, Text
    if isinstance(text, Annotation):
        text.update_positions(renderer)
    return Text.get_window_extent(text, renderer)


def _clipped_length(p, q, box):
    """Length of the part of segment p-q inside box (Liang-Barsky)."""
    x0, y0, x1, y1 = box
    dx, dy = q[0] - p[0], q[1] - p[1]
    lo, hi = 0.0, 1.0
    for delta, offset in ((-dx, p[0] - x0), (dx, x1 - p[0]),
                          (-dy, p[1] - y0), (dy, y1 - p[1])):
        if delta == 0:
            if offset < 0:
                return 0.0
            continue
        t = offset / delta
        if delta < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo >= hi:
            return 0.0
    return (hi - lo) * math.hypot(dx, dy)


def _segments_meet(p, q, r, s, slack=1.5):
    """Whether segments p-q and r-s cross or come within `slack` pixels."""
    def side(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2, d3, d4 = side(r, s, p), side(r, s, q), side(p, q, r), side(p, q, s)
    if ((d1 > 0) != (d2 > 0)) and ((d3 > 0) != (d4 > 0)):
        return True

    def distance(a, b, c):  # from point c to segment a-b
        length2 = (b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, (
            (c[0] - a[0]) * (b[0] - a[0]) + (c[1] - a[1]) * (b[1] - a[1]))
            / length2))
        return math.hypot(a[0] + t * (b[0] - a[0]) - c[0],
                          a[1] + t * (b[1] - a[1]) - c[1])

    return min(distance(r, s, p), distance(r, s, q), distance(p, q, r),
               distance(p, q, s)) < slack


class _Placer:
    """Greedy label placement in display space.

    Every point of the plot lies on the roofline, so the free space is below
    the roof and above it; a label tries positions around its anchor, nearest
    first, and takes the first where neither it nor its leader line runs into
    anything placed so far (markers, texts, roofs, other leaders) and it
    stays inside the axes. If no position is free it takes the least bad one.
    Roofs are straight lines on log-log axes, so all of this is exact
    rectangle and segment geometry in pixels.
    """

    # Below-right and below first: under the roof is where the free space
    # is for a point on the memory roof, and for one on a flat roof too.
    DIRECTIONS = [(1, -1), (0, -1), (1, -0.35), (-1, 1), (-1, -1), (0, 1),
                  (1, 1), (-1, 0), (0.4, -1), (-0.4, -1), (-0.4, 1), (0.4, 1),
                  (-1, 0.4), (1, 0.4), (-1, -0.4)]
    DISTANCES = [12, 22, 34, 48, 64, 82, 102, 124]
    # Costs, in units of pixels^2 of text overlap.
    ROOF_UNDER_TEXT = 200.0  # per pixel of roof under a label
    LEADER_CROSSING = 400.0  # per roof or leader a leader line crosses
    LEADER_UNDER_BOX = 20.0  # per pixel of leader over a marker or label

    def __init__(self, fig, ax, renderer):
        self.ax = ax
        self.renderer = renderer
        self.px_per_pt = fig.dpi / 72.0
        self.boxes = []  # (x0, y0, x1, y1) in pixels
        self.roofs = []  # ((x, y), (x, y)) in pixels
        self.leaders = []
        self.axes_box = ax.get_window_extent(renderer)

    def add_roof(self, start, end):
        self.roofs.append((tuple(self.ax.transData.transform(start)),
                           tuple(self.ax.transData.transform(end))))

    def block(self, bbox, pad=2.0):
        self.boxes.append((bbox.x0 - pad, bbox.y0 - pad, bbox.x1 + pad,
                           bbox.y1 + pad))

    def block_marker(self, x, y, area):
        cx, cy = self.ax.transData.transform((x, y))
        r = math.sqrt(area) / 2 * self.px_per_pt
        self.boxes.append((cx - r, cy - r, cx + r, cy + r))

    def badness(self, bbox, roofs=True):
        """Cost of a text at `bbox`: 0 when it is free."""
        a = self.axes_box
        if bbox.x0 < a.x0 or bbox.x1 > a.x1 or bbox.y0 < a.y0 or bbox.y1 > a.y1:
            return 1e12
        cost = 0.0
        for x0, y0, x1, y1 in self.boxes:
            w = min(x1, bbox.x1) - max(x0, bbox.x0)
            h = min(y1, bbox.y1) - max(y0, bbox.y0)
            if w > 0 and h > 0:
                cost += w * h
        if roofs:
            box = (bbox.x0, bbox.y0, bbox.x1, bbox.y1)
            cost += self.ROOF_UNDER_TEXT * sum(
                _clipped_length(p, q, box) for p, q in self.roofs)
        return cost

    def _leader(self, anchor, bbox, start):
        """The visible leader line: from the edge of the anchor's marker to
        the nearest point of the label's box; None when it has no length."""
        end = (min(max(anchor[0], bbox.x0), bbox.x1),
               min(max(anchor[1], bbox.y0), bbox.y1))
        length = math.hypot(end[0] - anchor[0], end[1] - anchor[1])
        if length <= start:
            return None
        t = start / length
        return ((anchor[0] + (end[0] - anchor[0]) * t,
                 anchor[1] + (end[1] - anchor[1]) * t), end)

    def _leader_badness(self, leader):
        if leader is None:
            return 0.0
        p, q = leader
        cost = self.LEADER_CROSSING * sum(
            _segments_meet(p, q, r, s) for r, s in self.roofs + self.leaders)
        cost += self.LEADER_UNDER_BOX * sum(
            _clipped_length(p, q, box) for box in self.boxes)
        return cost

    def place(self, text, marker_area=0.0, directions=None):
        """Moves `text` (an annotation with offset-point coordinates) to the
        best candidate position, then blocks its box and leader."""
        radius = math.sqrt(marker_area) / 2
        anchor = tuple(self.ax.transData.transform(text.xy))
        start = radius * self.px_per_pt + 1  # the leader starts at the marker
        best = None
        for distance in self.DISTANCES:
            if distance < radius:  # start outside the anchor's own marker
                continue
            for dx, dy in directions or self.DIRECTIONS:
                norm = math.hypot(dx, dy)
                text.xyann = (dx / norm * distance, dy / norm * distance)
                text.set_ha("left" if dx > 0 else "right" if dx < 0 else "center")
                text.set_va("bottom" if dy > 0 else "top" if dy < 0 else "center")
                bbox = _text_box(text, self.renderer)
                leader = self._leader(anchor, bbox, start)
                cost = self.badness(bbox) + self._leader_badness(leader)
                if best is None or cost < best[0]:
                    best = (cost, text.xyann, text.get_ha(), text.get_va(),
                            bbox, leader)
                if cost == 0:
                    break
            if best[0] == 0:
                break
        _, text.xyann, ha, va, bbox, leader = best
        text.set_ha(ha)
        text.set_va(va)
        self.block(bbox)
        if leader is not None:
            self.leaders.append(leader)


class _Figure:
    """One roofline figure, drawn in layers.

    The order matters: what has a fixed place (roofs, markers, legend, note)
    comes first, and every label after it is placed around what is already
    there, the most important labels first.
    """

    def __init__(self, report, entries, noun):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.report = report
        self.gpu = gpu = report["gpu"]
        self.peak = gpu["peak_flops"]
        self.simt = gpu["simt_peak_flops"]
        self.bandwidth = gpu["bandwidth"]
        self.tensor_ridge = self.peak / self.bandwidth
        self.simt_ridge = self.simt / self.bandwidth
        self.noun = noun

        self.entries = entries
        self.total_time = math.fsum(e.time_s for e in entries)
        for e in entries:
            e.share = e.time_s / self.total_time if self.total_time else 0.0
        placeable = [e for e in entries
                     if e.flops > 0 and e.nbytes > 0 and e.time_s > 0]
        self.skipped = [e for e in entries if e not in placeable]
        self.points = _merge_coincident(placeable)
        self.merged = len(self.points) < len(placeable)
        for e in self.points:
            e.area = max(MIN_AREA, FULL_SHARE_AREA * e.share)

        self.category_time = {}
        for e in self.points:
            self.category_time[e.category] = (
                self.category_time.get(e.category, 0.0) + e.time_s)
        self.categories = sorted(self.category_time,
                                 key=lambda c: (-self.category_time[c], c))
        self.colours = _colours(self.categories)
        self.roof_labels = [
            (self.tensor_ridge, self.peak, "%s tensor cores %s" % (
                gpu["precision"], _si(self.peak, "FLOP/s")), "bold"),
            (self.simt_ridge, self.simt,
             "fp32 SIMT %s" % _si(self.simt, "FLOP/s"), "normal")]

        self.fig = Figure(figsize=(10, 6.6), dpi=150)
        self.renderer = FigureCanvasAgg(self.fig).get_renderer()
        # Fixed margins instead of tight_layout: labels are placed in display
        # coordinates, which a later relayout would invalidate.
        self.fig.subplots_adjust(left=0.085, right=0.975, bottom=0.085,
                                 top=0.875)
        self.ax = self.fig.add_subplot()
        self.placer = None

    def draw(self, title, label_top):
        self._axes(title)
        self.placer = _Placer(self.fig, self.ax, self.renderer)
        self._roofs()
        self._markers()
        self._legend()
        self._note()
        self._roof_labels()
        self._memory_label()
        self._ridge_labels()
        self._point_labels(label_top)

    def save(self, out_prefix):
        for extension in ("svg", "png"):
            self.fig.savefig(
                "%s.%s" % (out_prefix, extension),
                # No timestamp: the SVG is the same for the same report.
                metadata={"Date": None} if extension == "svg" else None)

    def _limits(self):
        """Axis limits: all points and both ridges with margins. The top
        leaves room above the tensor roof, where the compute-bound points
        (usually the expensive ones) have their labels; the right end leaves
        room for the flat roofs' labels (`_right_limit`)."""
        xs = [e.x for e in self.points]
        ys = [e.y for e in self.points]
        x_lo = min(xs + [self.simt_ridge]) / 4
        x_hi = max(xs + [self.tensor_ridge]) * 12
        y_lo = min(ys + [self.bandwidth * x_lo]) / 2.5
        return x_lo, x_hi, y_lo, self.peak * 6

    def _right_limit(self, x_lo, x_hi):
        """Widens x_hi until each flat roof's label fits between the markers
        near that roof and the right edge of the axes.

        With u = log10(x_hi), a = log10(x_lo) and an axes W pixels wide, a
        marker at log10(x) = b lies (u - b) * W / (u - a) pixels left of the
        edge; that must be at least c, the marker's radius plus the label's
        width. Solved for u the condition is linear:
        u >= (b * W - c * a) / (W - c).
        """
        ax = self.ax
        width = ax.get_window_extent(self.renderer).width
        px_per_pt = self.fig.dpi / 72.0
        a, u = math.log10(x_lo), math.log10(x_hi)
        for _, roof_y, text, weight in self.roof_labels:
            probe = self.fig.text(0, 0, text, fontsize=9, fontweight=weight)
            box = _text_box(probe, self.renderer)
            probe.remove()
            roof_px = ax.transData.transform((x_lo, roof_y))[1]
            for e in self.points:
                radius = math.sqrt(e.area) / 2 * px_per_pt
                # Only markers reaching into the label's band above or below
                # the roof are in the way.
                y_px = ax.transData.transform((x_lo, e.y))[1]
                if abs(y_px - roof_px) > radius + box.height + 6 * px_per_pt:
                    continue
                c = radius + box.width + 12 * px_per_pt
                if c < 0.8 * width:
                    u = max(u, (math.log10(e.x) * width - c * a) / (width - c))
        return 10 ** u

    def _axes(self, title):
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax = self.ax
        ax.set_xscale("log")
        ax.set_yscale("log")
        x_lo, x_hi, y_lo, y_hi = self._limits()
        ax.set_xlim(x_lo, x_hi)
        ax.set_ylim(y_lo, y_hi)
        ax.set_xlim(x_lo, self._right_limit(x_lo, x_hi))
        ax.set_xlabel("Arithmetic intensity (FLOP/byte)", fontsize=10)
        ax.set_ylabel("Attained performance (FLOP/s)", fontsize=10)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
        ax.yaxis.set_major_formatter(FuncFormatter(
            lambda v, _: _si(v, "").strip()))
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="major", color="0.9", linewidth=0.6)
        ax.grid(True, which="minor", color="0.96", linewidth=0.4)
        ax.set_axisbelow(True)

        gpu = self.gpu
        self.fig.suptitle(title or "%s on %s (%s)" % (
            model_display_name(self.report["model"]),
            gpu["name"], gpu["precision"]), fontsize=13, y=0.975)
        # From the plotted entries rather than report["total"]: kernels
        # (fused) move fewer bytes and take less time than the ops they cover.
        entries = self.entries
        memory_time = math.fsum(e.time_s for e in entries if e.bound == "memory")
        ax.set_title(
            "predicted %s   ·   %s, %s   ·   %s of the time memory-bound" % (
                _duration(self.total_time),
                _si(sum(e.flops for e in entries), "FLOP"),
                _si(sum(e.nbytes for e in entries), "B"),
                _percent(memory_time / self.total_time
                         if self.total_time else 0.0)),
            fontsize=9.5, color="0.3", pad=8)

    def _roofs(self):
        """One diagonal up to the tensor ridge (the SIMT roof shares it up to
        its own ridge), then a flat line per peak, and the ridge points."""
        ax = self.ax
        x_lo, x_hi = ax.get_xlim()
        diagonal = ((x_lo, self.bandwidth * x_lo), (self.tensor_ridge, self.peak))
        tensor = ((self.tensor_ridge, self.peak), (x_hi, self.peak))
        simt = ((self.simt_ridge, self.simt), (x_hi, self.simt))
        roof = dict(color="0.15", linewidth=1.6, zorder=2, solid_capstyle="butt")
        for start, end in (diagonal, tensor):
            ax.plot(*zip(start, end), **roof)
        ax.plot(*zip(*simt), color="0.35", linewidth=1.3,
                linestyle=(0, (5, 3)), zorder=2)
        ax.scatter([self.simt_ridge, self.tensor_ridge], [self.simt, self.peak],
                   s=36, marker="D", facecolor="white", edgecolor="0.15",
                   linewidth=1.2, zorder=4)
        for start, end in (diagonal, tensor, simt):
            self.placer.add_roof(start, end)

    def _markers(self):
        # Largest first, so that small markers stay visible on top.
        ordered = sorted(self.points, key=lambda e: -e.area)
        self.ax.scatter([e.x for e in ordered], [e.y for e in ordered],
                        s=[e.area for e in ordered],
                        c=[self.colours[e.category] for e in ordered],
                        edgecolors="white", linewidths=0.7, alpha=0.9, zorder=3)
        for e in ordered:
            self.placer.block_marker(e.x, e.y, e.area)

    def _legend(self):
        from matplotlib.lines import Line2D

        if not self.categories:
            return
        handles = [Line2D([], [], linestyle="none", marker="o", markersize=7,
                          markerfacecolor=self.colours[c],
                          markeredgecolor="white", label="%s  %s" % (
                              c, _percent(self.category_time[c] / self.total_time)))
                   for c in self.categories]
        # Upper left is above the memory roof: never a point there.
        legend = self.ax.legend(
            handles=handles, loc="upper left", fontsize=8, title_fontsize=8.5,
            title="op type (share of time)" if self.noun == "op"
            else "kernel, by heaviest node (share)",
            framealpha=0.95, edgecolor="0.85", borderpad=0.7)
        legend.set_zorder(6)
        self.placer.block(legend.get_window_extent(self.renderer))

    def _note(self):
        notes = []
        if self.skipped:
            kinds = sorted({e.category for e in self.skipped})
            if len(kinds) > 4:
                kinds = kinds[:4] + ["…"]
            notes.append("not shown: %d %s%s with 0 FLOP or 0 bytes (%s), "
                         "%s of the time" % (
                             len(self.skipped), self.noun,
                             "" if len(self.skipped) == 1 else "s",
                             ", ".join(kinds),
                             _percent(math.fsum(e.share for e in self.skipped))))
        if self.points:
            notes.append("marker area ∝ share of predicted time")
        if self.merged:
            notes.append("%ss of one type at the same spot are merged "
                         "(+N more)" % self.noun)
        if not notes:
            return
        # Lower right is below the roof: never a point there either.
        note = self.ax.text(0.99, 0.015, "\n".join(notes),
                            transform=self.ax.transAxes, ha="right",
                            va="bottom", fontsize=8, color="0.35",
                            linespacing=1.4, zorder=6)
        self.placer.block(note.get_window_extent(self.renderer))

    def _best_spot(self, text, move, candidates, extra_cost=lambda box: 0.0):
        """Moves `text` with move(*candidate) to the first free spot among
        `candidates`, else to the least bad one, and blocks it there. Roofs
        are not obstacles: these labels belong on them."""
        best = None
        for candidate in candidates:
            move(*candidate)
            box = _text_box(text, self.renderer)
            cost = self.placer.badness(box, roofs=False) + extra_cost(box)
            if best is None or cost < best[0]:
                best = (cost, candidate)
            if cost == 0:
                break
        move(*best[1])
        self.placer.block(_text_box(text, self.renderer))

    def _roof_labels(self):
        """Flat-roof labels sit on their roof, as far right as the markers
        allow: above it first, else below it (under the roof is free at high
        intensity), never left of the ridge, where the diagonal runs."""
        x_hi = self.ax.get_xlim()[1]
        for ridge, y, text, weight in self.roof_labels:
            label = self.ax.annotate(
                text, xy=(x_hi, y), xytext=(-6, 3), textcoords="offset points",
                ha="right", fontsize=9, fontweight=weight, color="0.15",
                zorder=5)
            ridge_px = self.ax.transData.transform((ridge, y))[0]

            def move(x, offset, va, label=label, y=y):
                label.xy, label.xyann = (x, y), offset
                label.set_va(va)

            self._best_spot(
                label, move,
                [(x, offset, va)
                 for offset, va in (((-6, 3), "bottom"), ((-6, -3), "top"))
                 for x in _geomspace(x_hi, ridge, 16)],
                lambda box, r=ridge_px: 1e12 if box.x0 < r + 8 else 0.0)

    def _memory_label(self):
        """The memory roof's label runs along the diagonal, at the first spot
        from the left that no marker covers."""
        ax = self.ax
        x_lo = ax.get_xlim()[0]
        p0 = ax.transData.transform((x_lo, self.bandwidth * x_lo))
        p1 = ax.transData.transform((self.tensor_ridge, self.peak))
        angle = math.atan2(p1[1] - p0[1], p1[0] - p0[0])
        label = ax.annotate(
            "%s %s" % (_memory_kind(self.gpu["name"]),
                       _si(self.bandwidth, "B/s")),
            xy=(x_lo, self.bandwidth * x_lo), textcoords="offset points",
            # 4 pt off the line, towards the empty side above it.
            xytext=(-math.sin(angle) * 4, math.cos(angle) * 4),
            rotation=math.degrees(angle), rotation_mode="anchor", ha="left",
            va="bottom", fontsize=9, fontweight="bold", color="0.15", zorder=5)

        def move(x):
            label.xy = (x, self.bandwidth * x)

        self._best_spot(label, move, [
            (x,) for x in _geomspace(x_lo * 1.4, self.tensor_ridge / 3, 24)])

    def _ridge_labels(self):
        for x, y in ((self.tensor_ridge, self.peak),
                     (self.simt_ridge, self.simt)):
            label = self.ax.annotate(
                "ridge %.3g FLOP/B" % x, xy=(x, y), textcoords="offset points",
                xytext=(0, 0), fontsize=8, color="0.3", zorder=5)
            # Above-left of a ridge is above the diagonal: free.
            self.placer.place(label, 36, directions=[(-1, 1), (1, -1), (0, -1),
                                                     (-1, 0.3)])

    def _point_labels(self, label_top):
        expensive = sorted(self.points, key=lambda e: -e.time_s)
        for e in expensive[:max(label_top, 0)]:
            radius = math.sqrt(e.area) / 2
            label = self.ax.annotate(
                e.label(), xy=(e.x, e.y), xytext=(0, 0),
                textcoords="offset points", fontsize=7.5, color="0.1",
                zorder=5,
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white",
                          edgecolor="none", alpha=0.8),
                arrowprops=dict(arrowstyle="-", color="0.45", linewidth=0.6,
                                shrinkA=1, shrinkB=radius, zorder=4))
            self.placer.place(label, e.area)


def _geomspace(start, stop, count):
    ratio = (stop / start) ** (1.0 / (count - 1))
    return [start * ratio ** i for i in range(count)]


def model_display_name(path):
    """The model's name for titles: the file stem, or the directory for
    files named model.onnx as in the ONNX backend-test layout."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "model":
        parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
        return parent or stem
    return stem


def plot_report(report, out_prefix, title=None, label_top=8, kernels=False):
    """Writes OUT_PREFIX.svg and OUT_PREFIX.png for a validated report;
    raises ReportError if kernels are asked for and the report has none."""
    import matplotlib

    entries, noun = _entries(report, kernels)
    rc = {"svg.fonttype": "none",  # keep text as text: greppable, selectable
          "svg.hashsalt": "ridgeline",  # reproducible SVG ids
          "font.size": 9}
    with matplotlib.rc_context(rc):
        figure = _Figure(report, entries, noun)
        figure.draw(title, label_top)
        figure.save(out_prefix)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Draw the roofline plot of a `ridgec --report=json` "
        "report, or validate the report.")
    parser.add_argument("report", help="roofline report JSON")
    parser.add_argument("-o", dest="out_prefix", metavar="OUT_PREFIX",
                        help="write OUT_PREFIX.svg and OUT_PREFIX.png")
    parser.add_argument("--check", action="store_true",
                        help="only validate the report (exit status 0 or 1)")
    parser.add_argument("--title", help="figure title (default: "
                        "'<model> on <gpu> (<precision>)')")
    parser.add_argument("--label-top", type=int, default=8, metavar="N",
                        help="label the N most expensive points (default 8)")
    parser.add_argument("--kernels", action="store_true",
                        help="one point per kernel (the report's \"kernels\") "
                        "instead of per ONNX node")
    args = parser.parse_args(argv)
    if not args.check and not args.out_prefix:
        parser.error("-o OUT_PREFIX is required unless --check is given")

    try:
        report = load_report(args.report)
        if not args.check:
            plot_report(report, args.out_prefix, title=args.title,
                        label_top=args.label_top, kernels=args.kernels)
    except ReportError as e:
        shown = e.problems[:20]
        for problem in shown:
            print("%s: error: %s" % (args.report, problem), file=sys.stderr)
        if len(e.problems) > len(shown):
            print("%s: error: ... and %d more" % (
                args.report, len(e.problems) - len(shown)), file=sys.stderr)
        return 1
    except ImportError as e:
        print("error: plotting needs matplotlib (Debian: python3-matplotlib): "
              "%s" % e, file=sys.stderr)
        return 1
    except OSError as e:  # the output cannot be written
        print("%s: error: %s" % (e.filename or args.out_prefix,
                                 e.strerror or e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
