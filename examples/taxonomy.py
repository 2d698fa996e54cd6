"""
Taxonomy paths: predicting a root-to-leaf path
==============================================

A synthetic 3-level taxonomy of 27 leaves (a category's centre is its parent's plus an offset that
shrinks with depth): StructuredRidge on HierarchyPaths(parent, leaves_only=True), y = leaf id,
against a flat LogisticRegression over the leaves. Saves taxonomy.png (accuracy at each depth).
COMBPRED_EXAMPLE_QUICK=1 uses fewer examples (the output in the documentation); run it for the full figures.
"""

import os

import matplotlib.pyplot as plt
import numpy as np
from combpred import StructuredRidge, spaces
from combpred.metrics import hierarchical_loss
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

quick = os.environ.get("COMBPRED_EXAMPLE_QUICK") == "1"
parent = np.array([-1] + [0] * 3 + [1 + i // 3 for i in range(9)] + [4 + i // 3 for i in range(27)])
depth = np.repeat([0, 1, 2, 3], [1, 3, 9, 27])  # nodes are numbered level by level

rng = np.random.default_rng(0)
centre = np.zeros((parent.size, 20))
for v in range(1, parent.size):
    centre[v] = centre[parent[v]] + rng.normal(scale=[0, 1.5, 1.0, 0.7][depth[v]], size=20)
y = np.repeat(np.flatnonzero(depth == 3), 20 if quick else 60)  # examples per leaf, half for training
X = centre[y] + rng.normal(scale=1.5, size=(y.size, 20))
train = rng.permutation(y.size) < y.size // 2

paths = spaces.HierarchyPaths(parent, leaves_only=True)  # y = leaf id, standing for its whole path
models = {  # regularisation chosen by 3-fold cross-validation on the training half
    "StructuredRidge (HierarchyPaths)": GridSearchCV(StructuredRidge(space=paths), {"alpha": [0.1, 1, 10]}, cv=3),
    "flat LogisticRegression": GridSearchCV(LogisticRegression(max_iter=1000), {"C": [0.01, 0.1, 1]}, cv=3),
}
accuracy = {}
for name, model in models.items():
    pred = model.fit(X[train], y[train]).predict(X[~train])
    truth, guess, per_depth = y[~train], pred, []
    for _ in range(3):  # walk both paths up one level at a time: leaf, then parent, then grandparent
        per_depth.append(np.mean(truth == guess))
        truth, guess = parent[truth], parent[guess]
    accuracy[name] = per_depth[::-1]
    loss = hierarchical_loss(y[~train], pred, parent)
    print(f"{name:32s} accuracy at depth 1/2/3: {np.round(accuracy[name], 3)}, hierarchical loss {loss:.3f}")

fig, ax = plt.subplots(figsize=(6, 3.8))
for k, (name, acc) in enumerate(accuracy.items()):
    acc = np.asarray(acc)
    bars = ax.bar(
        np.arange(1, 4) + (k - 0.5) * 0.4, acc, 0.4, yerr=np.sqrt(acc * (1 - acc) / (~train).sum()), label=name
    )
    ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=2)
ax.set(xticks=[1, 2, 3], xlabel="depth (1 = top level)", ylabel="test accuracy (± s.e.)", ylim=(0, 1.32))
ax.set(yticks=np.linspace(0, 1, 6), title=f"path accuracy by depth, {(~train).sum()} test examples")
ax.legend(loc="upper center", ncol=2, fontsize=8)  # above the bars: the axis runs past 1 for it
fig.savefig("taxonomy.png", dpi=100, bbox_inches="tight")
print("saved taxonomy.png")
