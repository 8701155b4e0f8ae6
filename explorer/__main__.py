"""`python -m explorer COMMAND ...`: see explorer/cli/ (the parser: explorer/cli/main.py)."""

import sys

from explorer.cli import main

if __name__ == "__main__":
    sys.exit(main())
