"""One module per experiment; each registers itself on import (see ../registry.py).

Every module here whose name does not start with "_" is imported by the registry.
"""
