"""Parameter values as text, read the same on the Experiments page and the command line."""

from __future__ import annotations


def parse_values(text: str) -> tuple:
    """Comma-separated typed values ("16, 32, 64"), each an int, else a float, else the text itself."""
    return tuple(auto_value(t.strip()) for t in text.split(",") if t.strip())


def auto_value(text: str):
    """A typed value as an int, else a float, else the text itself."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def takes_own_data(params: type) -> bool:
    """Whether an experiment's params class takes a teacher's pairs (task "pairs", the TSV's text in `data`)."""
    return getattr(params, "takes_own_data", False)


__all__ = ["parse_values", "auto_value", "takes_own_data"]
