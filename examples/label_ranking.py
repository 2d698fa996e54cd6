"""
Label ranking: vehicle classes by plausibility
==============================================

Label ranking: order the 4 vehicle classes by plausibility for each silhouette.

StructuredRidge (RBF kernel, output space Permutations(4)) against the k-nearest-neighbour Borda
ranker, both tuned by an inner 5-fold CV (GridSearchCV's default), compared by Kendall τ over an outer 10-fold CV. Saves
label_ranking.png (τ per outer fold) in the current directory. The label-ranking sets ship with combpred.
COMBPRED_EXAMPLE_QUICK=1 runs 3 outer folds on 300 rows.
The output shown in the documentation is such a quick run's; run the script for the full figures.
"""

import os

import matplotlib.pyplot as plt
import numpy as np
from combpred import StructuredRidge, datasets, spaces
from combpred.baselines import KNNBordaRanker
from combpred.metrics import kendall_tau_scorer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

quick = os.environ.get("COMBPRED_EXAMPLE_QUICK") == "1"
X, Y = datasets.load_label_ranking("vehicle", return_X_y=True)  # Y[i, j] = rank of class j, 1 = best
if quick:
    X, Y = X[:300], Y[:300]

ridge = make_pipeline(StandardScaler(), StructuredRidge(space=spaces.Permutations(Y.shape[1]), kernel="rbf"))
ridge = GridSearchCV(
    ridge, {"structuredridge__alpha": [0.1, 1.0], "structuredridge__gamma": [0.02, 0.06]}, scoring=kendall_tau_scorer
)
knn = make_pipeline(StandardScaler(), KNNBordaRanker())
knn = GridSearchCV(knn, {"knnbordaranker__n_neighbors": [5, 10, 20]}, scoring=kendall_tau_scorer)

folds = KFold(3 if quick else 10, shuffle=True, random_state=0)
taus = {}
for name, model in [("StructuredRidge (rbf)", ridge), ("KNN-Borda", knn)]:
    taus[name] = cross_val_score(model, X, Y, scoring=kendall_tau_scorer, cv=folds)
    print(f"{name:22s} Kendall tau {taus[name].mean():.3f} ± {taus[name].std():.3f}")

print("true ranks", Y[-1], "predicted", ridge.fit(X[:-1], Y[:-1]).predict(X[-1:])[0])

# A paired dot plot: one grey line per outer fold joins the two models' τ on the same test rows,
# beside each model's mean ± standard error.
names, paired = list(taus), np.column_stack(list(taus.values()))
fig, ax = plt.subplots(figsize=(5, 4))
ax.plot([0, 1], paired.T, color="lightgrey", marker="o", zorder=1)
for k, (name, t) in enumerate(taus.items()):
    se = t.std(ddof=1) / np.sqrt(len(t))
    ax.errorbar(k + 0.12, t.mean(), se, fmt="s", color=f"C{k}", capsize=4, label=f"{name}: {t.mean():.3f} ± s.e.")
title = f"vehicle: paired by fold (mean difference {np.mean(paired[:, 0] - paired[:, 1]):+.3f})"
ax.set(xticks=[0, 1], xticklabels=names, xlim=(-0.4, 1.5), ylabel="Kendall τ on the outer fold", title=title)
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8)
fig.subplots_adjust(bottom=0.28)  # room for the legend below the axes
fig.savefig("label_ranking.png", dpi=100, bbox_inches="tight")
print("saved label_ranking.png")
