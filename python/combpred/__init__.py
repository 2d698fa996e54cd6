"""combpred: learning to predict combinatorial structures (label sets, rankings, routes, taxonomy
paths and subtrees, partial orders, graphs) from feature vectors.

The estimators follow scikit-learn's conventions; the numerics run in a Go core behind a flat C ABI.
"""

from . import datasets, spaces
from ._probabilistic import ProbabilisticStructured
from ._ridge import StructuredRidge
from ._version import __version__

__all__ = ["ProbabilisticStructured", "StructuredRidge", "datasets", "spaces", "__version__"]
