"""``schedlab sensitivity``: every published figure with the uncertainty its constants
carry (issue 31).

- :mod:`.bands`: the constants a machine's runs may depend on, each with the band its
  source supports (``schedlab machines NAME --json``: ``cost_sources`` and the idle
  states' ``wake`` provenance);
- :mod:`.morris`: Morris elementary effects over those bands (SALib);
- :mod:`.store`: finished runs on disk, so an interrupted study resumes;
- :mod:`.study`: nominal runs over seeds, screening, the Morris design, each row's band;
- :mod:`.verdict`: whether the seed spread widened by the constant band reaches a
  published figure, and if not, which constant would have to lie where (the row's
  verdict itself is :func:`schedlab.reproduce.verdict.judge`'s).
"""

from .bands import Constant, machine_constants
from .morris import Effect, morris_analyze, morris_sample
from .verdict import Consistency, consistency

__all__ = ["Constant", "machine_constants", "Effect", "morris_sample", "morris_analyze", "Consistency",
           "consistency"]
