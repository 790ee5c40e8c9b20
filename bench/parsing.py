"""Hostile input costs what its size does: each parser on a size-doubling series of its worst shapes.

For every shape the input doubles five times; the figure is the growth exponent, the slope of
log(time) against log(size) over the series (the fastest of five runs at each size): 1 is linear,
2 quadratic. The shapes are the ones that were — or could be — worse than linear:

- Markdown: lists and quotes nested to the reader's limit and past it (refused, after reading
  how deep), ``- - - … x`` lines (markdown-it's thematic-break rule once cost a Python step per
  character per list level), a long run of paragraphs, a wide table;
- frontmatter: many keys, a long flow list, flow nesting past libyaml's limit, an alias bomb
  (refused at its first alias);
- a JSON body's nesting, counted on its bytes before any parser (brackets, and strings full of
  escaped quotes);
- a Loro update's schema check, on an update that adds blocks.

Target: every exponent below 1.3 (a quadratic cost would show 2).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import timed, write_result  # noqa: E402
from fastpad.errors import ValidationFailed  # noqa: E402
from fastpad.jsontext import json_depth  # noqa: E402
from fastpad.notes.blocks import Block, NoteMeta  # noqa: E402
from fastpad.notes.document import NoteDocument  # noqa: E402
from fastpad.notes.markdown import parse_markdown  # noqa: E402

DOUBLINGS = 5
TARGET_EXPONENT = 1.3


def _markdown(text: str) -> None:
    try:
        parse_markdown(text)
    except ValidationFailed:
        pass


def _alias_bomb(n: int) -> str:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, n)]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _update_adding_blocks(n: int) -> tuple[NoteDocument, bytes]:
    note = NoteDocument.new(NoteMeta("t"), [Block(None, "paragraph", "first")])
    peer = NoteDocument.load(note.snapshot())
    frontier = peer.frontier()
    anchor = None
    for i in range(n):
        anchor = peer.insert_after(anchor, Block(None, "paragraph", f"paragraph {i}"))
    return note, peer.export_updates(frontier)


def _apply(n: int) -> Callable[[], None]:
    note, update = _update_adding_blocks(n)
    snapshot = note.snapshot()
    return lambda: NoteDocument.load(snapshot).apply_update(update)


# shape -> (base size, input of size n, what to run on it)
SHAPES: dict[str, tuple[int, Callable[[int], object], Callable[[object], None]]] = {
    "markdown: lists nested to the limit, repeated": (
        320, lambda n: ("".join("  " * d + "- x\n" for d in range(32)) + "\n") * (n // 32), _markdown),
    "markdown: a list nested past the limit (refused)": (
        64_000, lambda n: "- " * n + "x\n", _markdown),
    "markdown: quotes nested past the limit (refused)": (
        64_000, lambda n: "> " * n + "x\n", _markdown),
    "markdown: '- - - ... x' lines in a nested list": (
        20_000, lambda n: ("- " * 30 + "- - " * 40 + "x\n") * (n // 100), _markdown),
    "markdown: paragraphs": (1_000, lambda n: "A line of prose, [[a link]] and *emphasis*.\n\n" * n, _markdown),
    "markdown: a wide table": (500, lambda n: "| a | b |\n|---|---|\n" + "| x | y |\n" * n, _markdown),
    "frontmatter: many keys": (150, lambda n: "---\n" + "".join(f"k{i}: v{i}\n" for i in range(n)) + "---\n", _markdown),
    "frontmatter: a long flow list": (300, lambda n: "---\nk: [" + ", ".join(["1"] * n) + "]\n---\n", _markdown),
    "frontmatter: flow nesting past libyaml's limit (refused)": (
        64_000, lambda n: "---\nk: " + "[" * n + "]" * n + "\n---\n", _markdown),
    "frontmatter: an alias bomb (refused)": (2_000, _alias_bomb, _markdown),
    "json depth: nested brackets": (256 * 1024, lambda n: b"[" * (n // 2) + b"]" * (n // 2), json_depth),
    "json depth: strings of escaped quotes": (256 * 1024, lambda n: b'"' + b'\\"' * (n // 2) + b'"', json_depth),
    "loro update: the schema check on an update adding blocks": (125, _apply, lambda run: run()),
}


def measure(base: int, build: Callable[[int], object], run: Callable[[object], None]) -> dict[str, object]:
    series = []
    for step in range(DOUBLINGS + 1):
        n = base * 2**step
        data = build(n)
        series.append({"n": n, "bytes": len(data) if isinstance(data, (str, bytes)) else None,
                       **timed(lambda: run(data), repeats=5)})
    # The fastest of the runs (on a shared machine noise only adds time), and the slope of
    # log(time) against log(size) fitted over the whole series: one noisy doubling cannot make it.
    xs = [math.log2(point["n"]) for point in series]
    ys = [math.log2(max(point["min_ms"], 1e-3)) for point in series]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)
    steps = [round(b - a, 2) for a, b in zip(ys, ys[1:])]
    return {"series": series, "doubling_exponents": steps, "exponent": round(slope, 2)}


def main() -> int:
    figures = {}
    for shape, (base, build, run) in SHAPES.items():
        figures[shape] = measure(base, build, run)
        print(f"{shape}: exponent {figures[shape]['exponent']} (per doubling "
              f"{figures[shape]['doubling_exponents']}), largest {figures[shape]['series'][-1]['min_ms']} ms",
              flush=True)
    worst = max(f["exponent"] for f in figures.values())
    figures["worst_exponent"] = worst
    path = write_result("parsing", figures, {"exponent_below": TARGET_EXPONENT})
    print(f"worst exponent: {worst} (target < {TARGET_EXPONENT}); wrote {path}")
    return 0 if worst < TARGET_EXPONENT else 1


if __name__ == "__main__":
    sys.exit(main())
