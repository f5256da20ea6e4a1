"""A LangGraph drawing laid out in pure Python (grandalf's layered layout) and written as SVG."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Any

from grandalf.graphs import Edge, Graph, Vertex
from grandalf.layouts import SugiyamaLayout

ENDS = {"__start__": "start", "__end__": "end"}

FONT = 'font-family="Helvetica,Arial,sans-serif"'
CHAR_W = 6.6  # average width of a character at 11px, for sizing boxes without font metrics
NODE_H = 30.0
MARGIN = 16.0
FILL, STROKE, EDGE = "#eef1fb", "#5c6bc0", "#3f4a8a"


@dataclass
class _View:
    """What grandalf reads and writes on a vertex or an edge: size, centre, route."""

    w: float = 0.0
    h: float = NODE_H
    xy: tuple[float, float] = (0.0, 0.0)
    points: list[tuple[float, float]] = field(default_factory=list)

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = [(float(x), float(y)) for x, y in points]


def _label(node: Any) -> str:
    return ENDS.get(node.id, str(node.name))


def _clip(
    centre: tuple[float, float], view: _View, towards: tuple[float, float], oval: bool
) -> tuple[float, float]:
    """Where the segment from ``centre`` to ``towards`` leaves the node's box (or oval)."""
    dx, dy = towards[0] - centre[0], towards[1] - centre[1]
    if dx == 0 and dy == 0:
        return centre
    half_w, half_h = view.w / 2, view.h / 2
    if oval:
        scale = 1 / math.hypot(dx / half_w, dy / half_h)
    else:
        scale = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
    return centre[0] + dx * min(scale, 1.0), centre[1] + dy * min(scale, 1.0)


def _layout(drawn: Any) -> tuple[dict[str, _View], list[list[tuple[float, float]]]]:
    """Each node's box and each edge's route (in ``drawn.edges`` order), in one plane."""
    views = {
        key: _View(w=max(len(_label(node)) * CHAR_W + 24, 56.0))
        for key, node in drawn.nodes.items()
    }
    vertices = {key: Vertex(key) for key in drawn.nodes}
    for key, vertex in vertices.items():
        vertex.view = views[key]
    laid = [e for e in drawn.edges if e.source != e.target]
    edges = {id(e): Edge(vertices[e.source], vertices[e.target]) for e in laid}
    for edge in edges.values():
        edge.view = _View()
    graph = Graph(list(vertices.values()), list(edges.values()))
    left = 0.0
    for part in graph.C:  # side by side when the drawing has several parts
        sugiyama = SugiyamaLayout(part)
        sugiyama.xspace, sugiyama.yspace = 28, 34
        roots = [v for v in part.sV if v.data == "__start__"] or None
        sugiyama.init_all(roots=roots, optimize=True)
        sugiyama.draw(4)
        boxes = [v.view for v in part.sV]
        low = min(b.xy[0] - b.w / 2 for b in boxes)
        for box in boxes:
            box.xy = (box.xy[0] - low + left, box.xy[1])
        for edge in part.sE:
            edge.view.points = [(x - low + left, y) for x, y in edge.view.points]
        left = max(b.xy[0] + b.w / 2 for b in boxes) + 40
    routes = []
    for e in drawn.edges:
        box = views[e.source]
        if e.source == e.target:  # a loop on the node's right side
            x, y = box.xy[0] + box.w / 2, box.xy[1]
            routes.append([(x, y - 6), (x + 26, y - 14), (x + 26, y + 14), (x, y + 6)])
            continue
        points = edges[id(e)].view.points or [box.xy, views[e.target].xy]
        if len(points) < 2:
            points = [box.xy, views[e.target].xy]
        head, tail = points[0], points[-1]
        points[0] = _clip(head, box, points[1], e.source in ENDS)
        points[-1] = _clip(tail, views[e.target], points[-2], e.target in ENDS)
        routes.append(points)
    return views, routes


def _bent(points: list[tuple[float, float]], bend: float) -> str:
    """An SVG path through the points; a straight route bent sideways by ``bend`` pixels."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    if len(points) == 2 and bend:
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        cx = (x0 + x1) / 2 - (y1 - y0) / length * bend
        cy = (y0 + y1) / 2 + (x1 - x0) / length * bend
        return f"M{x0:.1f},{y0:.1f} Q{cx:.1f},{cy:.1f} {x1:.1f},{y1:.1f}"
    return "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _arrow(points: list[tuple[float, float]], bend: float) -> str:
    """The arrowhead's polygon at the route's end."""
    (x0, y0), (x1, y1) = points[-2], points[-1]
    if len(points) == 2 and bend:
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        x0, y0 = (
            (x0 + x1) / 2 - (y1 - y0) / length * bend,
            (y0 + y1) / 2 + (x1 - x0) / length * bend,
        )
    angle = math.atan2(y1 - y0, x1 - x0)
    corners = [(x1, y1)]
    for side in (-0.45, 0.45):
        corners.append((x1 - 9 * math.cos(angle + side), y1 - 9 * math.sin(angle + side)))
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)


def _label_at(edge: Any, route: list[tuple[float, float]]) -> tuple[float, float, str] | None:
    """Where a branch label is written (beside the route's middle point), or None."""
    if edge.data is None or str(edge.data) == edge.target:
        return None
    x, y = route[(len(route) - 1) // 2]
    return x + 5, y - 3, str(edge.data)


def render(drawn: Any, title: str) -> str:
    """The drawing as one inline ``<svg>`` block: a ``g.node`` per node, a ``g.edge`` per edge.

    Each group carries a ``<title>`` (the node's name, or ``source->target``) as Graphviz's
    output does; conditional edges are dashed and carry their branch label when it is not the
    target's name.
    """
    views, routes = _layout(drawn)
    pairs = {(e.source, e.target) for e in drawn.edges}
    labels = {
        i: _label_at(e, route) for i, (e, route) in enumerate(zip(drawn.edges, routes, strict=True))
    }
    xs = [v.xy[0] + s * v.w / 2 for v in views.values() for s in (-1, 1)]
    xs += [x for route in routes for x, _ in route]
    xs += [x + len(text) * CHAR_W * 0.85 for x, _, text in filter(None, labels.values())]
    ys = [v.xy[1] + s * v.h / 2 for v in views.values() for s in (-1, 1)]
    shift_x, shift_y = MARGIN - min(xs), MARGIN - min(ys)
    width, height = max(xs) - min(xs) + 2 * MARGIN, max(ys) - min(ys) + 2 * MARGIN
    parts = [
        f'<svg role="img" aria-label="{escape(title)}" viewBox="0 0 {width:.0f} {height:.0f}"'
        f' style="max-width: min(100%, {width:.0f}px); height: auto"'
        ' xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<g transform="translate({shift_x:.1f},{shift_y:.1f})">',
    ]
    for i, (e, route) in enumerate(zip(drawn.edges, routes, strict=True)):
        bend = 14.0 if (e.target, e.source) in pairs and e.source != e.target else 0.0
        dash = ' stroke-dasharray="5,3"' if e.conditional else ""
        parts += [
            '<g class="edge">',
            f"<title>{escape(e.source)}&#45;&gt;{escape(e.target)}</title>",
            f'<path d="{_bent(route, bend)}" fill="none" stroke="{EDGE}"{dash}/>',
            f'<polygon points="{_arrow(route, bend)}" fill="{EDGE}" stroke="{EDGE}"/>',
        ]
        if (text := labels[i]) is not None:
            parts.append(
                f'<text x="{text[0]:.1f}" y="{text[1]:.1f}" {FONT} font-size="9"'
                f' fill="{EDGE}">{escape(text[2])}</text>'
            )
        parts.append("</g>")
    for key, node in drawn.nodes.items():
        view = views[key]
        (x, y), label = view.xy, _label(node)
        if key in ENDS:
            shape = (
                f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{view.w / 2:.1f}" ry="{view.h / 2:.1f}"'
                f' fill="#ffffff" stroke="{STROKE}"/>'
            )
        else:
            shape = (
                f'<rect x="{x - view.w / 2:.1f}" y="{y - view.h / 2:.1f}" width="{view.w:.1f}"'
                f' height="{view.h:.1f}" rx="6" fill="{FILL}" stroke="{STROKE}"/>'
            )
        parts += [
            '<g class="node">',
            f"<title>{escape(key)}</title>",
            shape,
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" {FONT} font-size="11">'
            f"{escape(label)}</text>",
            "</g>",
        ]
    return "\n".join([*parts, "</g>", "</svg>"])
