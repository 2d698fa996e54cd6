"""Node confidences scored as the hierarchical multi-label (HMC) literature scores them, and the values it
publishes for the Clus HMC splits in ../shared/datasets/hierarchical_funcat_go.

AU(PRC) is the micro-averaged precision over every (instance, node) pair except the nodes every instance
carries by construction: the virtual root, and on Gene Ontology sets the three ontology roots
(GO0003674 molecular function, GO0005575 cellular component, GO0008150 biological process), which every
gene's annotation reaches. The Clus HMC datasets page says not to score them, and C-HMCNN's evaluation
(its main.py: ``average_precision_score(..., average="micro")`` over ``to_eval``, the nodes other than
these four) leaves them out. Scored, they are always-positive pairs that raise every model's figure, the
constant predictor's most: on gasch2_GO's test genes the training term frequencies score 0.431 with
them and 0.342 without.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import average_precision_score

UNSCORED_NODES = frozenset({"root", "GO0003674", "GO0005575", "GO0008150"})


def scored_columns(node_names: Sequence[str]) -> np.ndarray:
    """Indices of the nodes that AU(PRC) and hierarchical F1 score (column 0 is the virtual root)."""
    cols = [j for j, name in enumerate(node_names) if j > 0 and name not in UNSCORED_NODES]
    return np.asarray(cols, dtype=np.intp)


def auprc(R: np.ndarray, S: np.ndarray, columns: np.ndarray | None = None) -> float:
    """Micro-averaged precision of the scores S over the (instance, node) pairs of the given columns
    (default: every node but the virtual root, column 0, which is right for the trees)."""
    cols = slice(1, None) if columns is None else columns
    return float(average_precision_score(R[:, cols].ravel(), S[:, cols].ravel()))


# Published test-split AU(PRC) on the same train / valid / test files (models trained on train + valid).
# Clus-HMC (Vens et al. 2008), Clus-Ens (Schietgat et al. 2010) and HMCN-F as tabulated by Wehrmann, Cerri &
# Barros, "Hierarchical Multi-Label Classification Networks", ICML 2018 (PMLR 80), results table; C-HMCNN(h)
# from Giunchiglia & Lukasiewicz, "Coherent Hierarchical Multi-Label Classification Networks", NeurIPS 2020.
# Read here from Papers with Code's result listings for the two papers and a public summary of the ICML table
# (github.com/D3lt4lph4/papers); the PDFs themselves could not be opened. C-HMCNN's imclef07a value was not
# in the material reachable here, so it is not quoted.
PUBLISHED: dict[str, dict[str, float]] = {
    "cellcycle_FUN": {"Clus-HMC": 0.172, "Clus-Ens": 0.227, "HMCN-F": 0.252, "C-HMCNN(h)": 0.255},
    "gasch2_GO": {"Clus-HMC": 0.369, "Clus-Ens": 0.395, "HMCN-F": 0.465, "C-HMCNN(h)": 0.414},
    "imclef07a": {"Clus-HMC": 0.574, "Clus-Ens": 0.777, "HMCN-F": 0.950},
}
PUBLISHED_SOURCE = (
    "Published test AU(PRC) on the same splits: Clus-HMC (Vens et al., Machine Learning 73, 2008), Clus-Ens "
    "(Schietgat et al., BMC Bioinformatics 11:2, 2010) and HMCN-F as tabulated by Wehrmann, Cerri & Barros (ICML "
    "2018); C-HMCNN(h) from Giunchiglia & Lukasiewicz (NeurIPS 2020). Read from Papers with Code's listings of the "
    "two papers and a public summary of the ICML table, not from the PDFs. The papers' figures are areas under "
    "the pooled precision-recall curve (Clus interpolates it; C-HMCNN uses scikit-learn's micro average "
    "precision, as here) over the same nodes, from models trained on train + valid."
)


def published_line(name: str, ours: dict[str, float]) -> str:
    """One Markdown sentence putting this run's test AU(PRC) beside the published values for data set ``name``."""
    theirs = PUBLISHED.get(name, {})
    if not theirs:
        return f"- {name}: no published AU(PRC) is quoted."
    parts = [f"{k} {v:.3f}" for k, v in theirs.items()]
    here = [f"{k} {v:.3f}" for k, v in ours.items()]
    return f"- {name}, published test AU(PRC): {', '.join(parts)}; this run: {', '.join(here)}."
