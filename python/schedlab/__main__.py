"""``python -m schedlab`` is the ``schedlab`` command."""

from .cli import main

main()
