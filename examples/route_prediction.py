"""
Route prediction: a round trip from a feature vector
====================================================

Route prediction: learn which round trip (directed cycle) a traveller takes from a feature vector.

Synthetic data as in the thesis' dicycle experiment: a hidden policy scores every arc u→v of 8 places
as a linear function of 6 features, and each traveller takes the best-scoring directed cycle.
StructuredRidge(space=DirectedCycles(8)) learns the policy from (features, route) pairs. Saves
route_prediction.png (true and predicted route of one test traveller on a circle) in the current
directory. COMBPRED_EXAMPLE_QUICK=1 trains on fewer examples.
The output shown in the documentation is such a quick run's; run the script for the full figures.
"""

import os

import matplotlib.pyplot as plt
import numpy as np
from combpred import StructuredRidge, spaces
from combpred.metrics import policy_cosine

quick = os.environ.get("COMBPRED_EXAMPLE_QUICK") == "1"
n_places, n_features = 8, 6
space = spaces.DirectedCycles(n_places)  # y[v] = place after v on the route, -1 = v not visited
rng = np.random.default_rng(0)
# one row per pair u < v (its score: +w for u→v, −w for v→u), as a fitted model's coef_
W_true = rng.uniform(-1, 1, size=(space.dim, n_features))
X = rng.uniform(0, 1, size=(300 if quick else 2000, n_features))
Y = space.decode(X @ W_true.T)  # each traveller's best route
X_test = rng.uniform(0, 1, size=(200, n_features))
Y_test = space.decode(X_test @ W_true.T)

model = StructuredRidge(space=space, alpha=1.0, fit_intercept=False).fit(X, Y)
Y_pred = model.predict(X_test)
print(f"exactly right routes: {np.mean(np.all(Y_pred == Y_test, axis=1)):.1%}")
print(f"route coordinates right (space.score): {space.score(Y_test, Y_pred):.3f}")
print(f"cosine of learned and true policy: {policy_cosine(W_true, model.coef_, X_test):.3f}")

angle = 2 * np.pi * np.arange(n_places) / n_places
xy = np.c_[np.cos(angle), np.sin(angle)]
fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
true_arcs = {(u, v) for u, v in enumerate(Y_test[0]) if v >= 0}
for ax, route, title in [(axes[0], Y_test[0], "true route"), (axes[1], Y_pred[0], "predicted route")]:
    ax.scatter(*xy.T, s=300, color="lightgrey")
    for v, (x, y) in enumerate(xy):
        ax.text(x, y, str(v), ha="center", va="center")
    for u, v in enumerate(route):
        if v >= 0:  # arcs the true route also takes in green, others in red
            color = "tab:green" if (u, v) in true_arcs else "tab:red"
            ax.annotate("", xy[v], xy[u], arrowprops={"arrowstyle": "->", "color": color, "shrinkA": 12, "shrinkB": 12})
    ax.set(title=f"test traveller 0: {title}", aspect="equal")
    ax.axis("off")
fig.savefig("route_prediction.png", dpi=100, bbox_inches="tight")
print("saved route_prediction.png")
