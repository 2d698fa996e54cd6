"""combpred: learning to predict combinatorial structures (label sets, rankings, routes, taxonomy
paths and subtrees, partial orders, graphs) from feature vectors.

The estimators follow scikit-learn's conventions; the numerics run in a Go core behind a flat C ABI.
"""

from . import datasets, decision, exceptions, spaces
from ._config import config_context, get_config, set_config
from ._probabilistic import ProbabilisticStructured
from ._ridge import StructuredRidge
from ._version import __version__

__all__ = [
    "ProbabilisticStructured",
    "StructuredRidge",
    "config_context",
    "datasets",
    "decision",
    "exceptions",
    "get_config",
    "set_config",
    "spaces",
    "__version__",
]
