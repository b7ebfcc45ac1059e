"""Small server-side SVG charts for the agreement dashboard: bars, a line with a confidence band, a heatmap.

Plain SVG strings (no JavaScript, no external library): they render in any browser, print, and can be
asserted on in tests. Every chart has a title, labelled axes with units, and an accessible ``<title>``.
All text is escaped.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

FONT = 'font-family="system-ui, sans-serif"'
BLUE = "#2f6db3"
BAND = "#9dbde6"
GREY = "#d9d9d9"


def _svg(width: int, height: int, title: str, body: list[str]) -> SafeString:
    width = max(width, 8 * len(title) + 40)  # never clip the title
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" class="chart" {FONT} font-size="12"><title>{escape(title)}</title>'
        f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="14" font-weight="600">{escape(title)}</text>'
        + "".join(body) + "</svg>"
    )


def _text_width(text: str, size: float = 12) -> float:
    """A generous estimate of the rendered width of ``text`` (no font metrics on the server): Hangul and
    other wide characters take a full em, the rest about 0.62 em. Margins are sized from it so that no
    label is clipped."""
    return sum(size if unicodedata.east_asian_width(ch) in "WF" else size * 0.62 for ch in text)


def _label_margin(labels: Sequence[str], minimum: int) -> int:
    return max(minimum, math.ceil(max((_text_width(label) for label in labels), default=0) + 12))


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    start = (lo // step) * step
    ticks, value = [], start
    while value <= hi + step * 1e-9:
        if value >= lo - step * 1e-9:
            ticks.append(round(value, 10))
        value += step
    return ticks


def _fmt(value: float, fmt: str) -> str:
    return format(value, fmt)


def bar_chart(labels: Sequence[str], values: Sequence[float | None], *, title: str, value_label: str,
              value_range: tuple[float, float] | None = None, fmt: str = ".2f", width: int = 560,
              highlight: Sequence[bool] | None = None) -> SafeString:
    """Horizontal bars (one row per label, so long names stay readable); ``value_label`` names the axis
    and its unit. ``None`` values are drawn as an empty row marked 'n/a'."""
    row, top, right = 22, 30, 60
    left = _label_margin(labels, 150)
    width += left - 150  # the plot keeps its width; long labels widen the chart
    height = top + row * max(len(labels), 1) + 45
    finite = [v for v in values if v is not None]
    lo, hi = value_range or (min([0.0, *finite]), max([0.0, *finite]) or 1.0)  # all zero: a 0–1 axis
    plot_w = width - left - right

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    body = []
    for tick in _nice_ticks(lo, hi):
        body.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top}" y2="{top + row * len(labels)}" '
                    f'stroke="{GREY}"/><text x="{x(tick):.1f}" y="{top + row * len(labels) + 14}" '
                    f'text-anchor="middle">{_fmt(tick, "g")}</text>')
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + i * row
        body.append(f'<text x="{left - 6}" y="{y + row * 0.65:.1f}" text-anchor="end">{escape(label)}</text>')
        if value is None:
            missing = escape(_("n/a"))
            body.append(f'<text x="{left + 4}" y="{y + row * 0.65:.1f}" fill="#777">{missing}</text>')
            continue
        x0, x1 = sorted((x(max(lo, 0.0)), x(value)))
        color = "#c0392b" if highlight and highlight[i] else BLUE
        body.append(f'<rect x="{x0:.1f}" y="{y + 3}" width="{max(x1 - x0, 1):.1f}" height="{row - 6}" '
                    f'fill="{color}"><title>{escape(label)}: {_fmt(value, fmt)}</title></rect>'
                    f'<text x="{x1 + 4:.1f}" y="{y + row * 0.65:.1f}">{_fmt(value, fmt)}</text>')
    body.append(f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">{escape(value_label)}</text>')
    return _svg(width, height, title, body)


@dataclass
class Series:
    name: str
    values: Sequence[float | None]
    lower: Sequence[float | None] | None = None
    upper: Sequence[float | None] | None = None
    color: str = BLUE
    #: How a point's value is written in its tooltip (counts as whole numbers).
    fmt: str = ".3f"


def line_chart(x_labels: Sequence[str], series: Sequence[Series], *, title: str, x_label: str, y_label: str,
               y_range: tuple[float, float] | None = None, width: int = 560, height: int = 260) -> SafeString:
    """Lines over ordered points (dates or annotation counts) with an optional shaded band (e.g. the 95 %
    interval); missing values break the line."""
    left, right, top, bottom = 60, 20, 30, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    finite = [v for s in series for seq in (s.values, s.lower or [], s.upper or []) for v in seq if v is not None]
    lo, hi = y_range or (min(finite, default=0.0), max(finite, default=1.0))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    n = len(x_labels)

    def px(i: int) -> float:
        return left + (i / (n - 1) * plot_w if n > 1 else plot_w / 2)

    def py(v: float) -> float:
        return top + (hi - v) / (hi - lo) * plot_h

    body = []
    for tick in _nice_ticks(lo, hi):
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" '
                    f'stroke="{GREY}"/><text x="{left - 6}" y="{py(tick) + 4:.1f}" text-anchor="end">'
                    f'{_fmt(tick, "g")}</text>')
    step = max(1, n // 8)
    for i in range(0, n, step):
        body.append(f'<text x="{px(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{escape(x_labels[i])}</text>')
    for s in series:
        if s.lower is not None and s.upper is not None:
            points = [(i, lo_v, hi_v) for i, (lo_v, hi_v) in enumerate(zip(s.lower, s.upper, strict=True))
                      if lo_v is not None and hi_v is not None]
            if len(points) >= 2:
                outline = [f"{px(i):.1f},{py(h):.1f}" for i, _, h in points]
                outline += [f"{px(i):.1f},{py(lw):.1f}" for i, lw, _ in reversed(points)]
                band = escape(_("%(series)s: 95%% interval") % {"series": s.name})
                body.append(f'<polygon points="{" ".join(outline)}" fill="{BAND}" opacity="0.6">'
                            f'<title>{band}</title></polygon>')
        segment: list[str] = []
        for i, v in enumerate([*s.values, None]):
            if v is None:
                if len(segment) > 1:
                    body.append(f'<polyline points="{" ".join(segment)}" fill="none" stroke="{s.color}" '
                                f'stroke-width="2"/>')
                segment = []
                continue
            segment.append(f"{px(i):.1f},{py(v):.1f}")
            point = escape(_("%(series)s at %(x)s: %(value)s") % {"series": s.name, "x": x_labels[i],
                                                                  "value": _fmt(v, s.fmt)})
            body.append(f'<circle cx="{px(i):.1f}" cy="{py(v):.1f}" r="3" fill="{s.color}">'
                        f'<title>{point}</title></circle>')
    body.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#333"/>'
                f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#333"/>')
    body.append(f'<text x="{left + plot_w / 2}" y="{height - 22}" text-anchor="middle">{escape(x_label)}</text>'
                f'<text transform="translate(14 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
                f'{escape(y_label)}</text>')
    if len(series) > 1:
        for k, s in enumerate(series):
            body.append(f'<rect x="{left + 10 + k * 170}" y="{height - 12}" width="10" height="10" fill="{s.color}"/>'
                        f'<text x="{left + 24 + k * 170}" y="{height - 3}">{escape(s.name)}</text>')
    return _svg(width, height, title, body)


def _color(value: float, lo: float, hi: float) -> str:
    """White → blue for agreement-like values; clamped."""
    t = 0.0 if hi <= lo else min(max((value - lo) / (hi - lo), 0.0), 1.0)
    r, g, b = (int(255 + (c - 255) * t) for c in (47, 109, 179))
    return f"rgb({r},{g},{b})"


def heatmap(row_labels: Sequence[str], col_labels: Sequence[str], matrix: Sequence[Sequence[float | None]], *,
            title: str, x_label: str, y_label: str, value_range: tuple[float, float] | None = None,
            fmt: str = ".2f", cell: int = 34) -> SafeString:
    """A matrix of coloured cells with the value written in each (grey = not available)."""
    top = 40
    left = _label_margin(row_labels, 130)
    finite = [v for row in matrix for v in row if v is not None]
    lo, hi = value_range or (min(finite, default=0.0), max(finite, default=1.0))
    # Column labels are turned by 45°: the longest one reaches down and to the right by 0.71 of its width.
    reach = math.ceil(0.71 * max((_text_width(label) for label in col_labels), default=0))
    width = left + cell * len(col_labels) + max(20, reach + 10)
    height = top + cell * len(row_labels) + max(110, reach + 50)
    body, missing = [], escape(_("n/a"))
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            x, y = left + j * cell, top + i * cell
            fill = GREY if value is None else _color(value, lo, hi)
            text = "" if value is None else _fmt(value, fmt)
            dark = value is not None and hi > lo and (value - lo) / (hi - lo) > 0.6
            body.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" stroke="#fff">'
                        f'<title>{escape(row_labels[i])} × {escape(col_labels[j])}: '
                        f'{text or missing}</title></rect>'
                        f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle" font-size="10" '
                        f'fill="{"#fff" if dark else "#222"}">{text}</text>')
    for i, label in enumerate(row_labels):
        body.append(f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" text-anchor="end">{escape(label)}'
                    f'</text>')
    for j, label in enumerate(col_labels):
        x, y = left + j * cell + cell / 2, top + cell * len(row_labels) + 8
        body.append(f'<text transform="translate({x} {y}) rotate(45)" text-anchor="start">{escape(label)}</text>')
    body.append(f'<text x="{left + cell * len(col_labels) / 2}" y="{height - 6}" text-anchor="middle">'
                f'{escape(x_label)}</text><text transform="translate(14 {top + cell * len(row_labels) / 2}) '
                f'rotate(-90)" text-anchor="middle">{escape(y_label)}</text>')
    return _svg(max(width, 320), height, title, body)
