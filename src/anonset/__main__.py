"""``python -m anonset``: the same as the ``anonset`` command."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
