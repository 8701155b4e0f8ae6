"""The command line: `python -m explorer COMMAND ...` (explorer/__main__.py), or `explorer COMMAND ...` after
`pip install .` (pyproject's script, `explorer.cli:main`).

`main` holds the parser (COMMANDS, main), `common` what every command shares (UsageError, own_file, Progress,
on_ctrl_c); one module a command: `train` (train, resume), `experiment`, `search`, `lessons`, `interpret`,
`export` (report, figure); `pretrain`'s lives beside its recipes (explorer/store/shipped.py). The command modules
import `common` and the library, `main` imports them, and nothing imports back up: the library never imports
the CLI. Note that `explorer.cli.main` is the function: `from explorer.cli import main, COMMANDS`.
"""

from explorer.cli.main import COMMANDS, Command, main

__all__ = ["COMMANDS", "Command", "main"]
