"""
The paper's Fig. 5 view on a UCI set
====================================

Accuracy against total nodes on ``pendigits``, one of the UCI sets of the jungle paper's
Fig. 5, with its protocol: pooled rows, random 50/50 splits, 8 DAGs or trees. It reads the
set from the data folder (``$JUNGLESEG_DATA``, default ``../shared/data``); here 2 splits
and a few depths keep it short (``benchmarks/nodes_vs_accuracy.py`` runs the full view).
"""

import matplotlib.pyplot as plt
import numpy as np

from jungleseg import JungleClassifier
from jungleseg.datasets.uci import load_uci, paper_splits

X, y = load_uci("pendigits")
splits = paper_splits(len(y), repeats=2, seed=0)

fig, ax = plt.subplots(figsize=(6, 4))
for width, label in ((32, "jungle, M = 32"), (128, "jungle, M = 128"), (None, "forest")):
    nodes, accuracy = [], []
    for depth in (6, 9, 12, 16):
        runs = []
        for train, test in splits:
            clf = JungleClassifier(n_estimators=8, max_width=width, max_depth=depth,
                                   random_state=0).fit(X[train], y[train])
            runs.append((clf.node_count_, clf.score(X[test], y[test])))
        nodes.append(np.mean([n for n, _ in runs]))
        accuracy.append(100 * np.mean([a for _, a in runs]))
    ax.plot(nodes, accuracy, marker="o", label=label)
ax.set_xscale("log")
ax.set_xlabel("total nodes (8 DAGs or trees)")
ax.set_ylabel("test accuracy (%)")
ax.set_title("pendigits, mean of 2 random 50/50 splits")
ax.legend()
fig.tight_layout()
plt.show()
