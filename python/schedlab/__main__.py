"""``python -m schedlab`` is the ``schedlab`` command."""

from .cli import app

app(prog_name="schedlab")
