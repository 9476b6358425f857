"""A Markdown table from a header and rows, and a duration as h:mm:ss, written once for the report modules that
print plain tables (the corpus-size curves, the verdict comparison, the run timings and segments)."""

from __future__ import annotations

ALIGN = {"l": "---", "r": "---:", "c": ":---:"}


def table(header: list[str], rows: list[list], align: list[str] | None = None) -> list[str]:
    """The table's lines; ``align``: one of ``l`` / ``r`` / ``c`` per column (default left); a cell's ``|`` is
    escaped and None is written as an empty cell."""
    align = align or ["l"] * len(header)
    if len(align) != len(header) or any(len(row) != len(header) for row in rows):
        raise ValueError("every row and the alignment need one entry per header column")

    def line(cells) -> str:
        return "| " + " | ".join("" if c is None else str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(header), "| " + " | ".join(ALIGN[a] for a in align) + " |", *(line(row) for row in rows)]


def hms(seconds: float) -> str:
    """Seconds as h:mm:ss."""
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
