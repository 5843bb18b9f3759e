"""
A jungle against a forest at equal nodes
========================================

The jungle paper's main claim: merging nodes level by level gives a model that needs far
fewer nodes than a forest for the same accuracy. Here 4 DAGs of widths 16 and 64 and a forest
of 4 trees (``max_width=None``: the same features and objective, no merging) are grown to
increasing depths on scikit-learn's digits, and test accuracy is drawn against total nodes.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from jungleseg import JungleClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

fig, ax = plt.subplots(figsize=(6, 4))
for width, label in ((16, "jungle, M = 16"), (64, "jungle, M = 64"), (None, "forest")):
    nodes, accuracy = [], []
    for depth in (4, 6, 8, 10, 12, 15):
        clf = JungleClassifier(n_estimators=4, max_width=width, max_depth=depth,
                               random_state=0).fit(X_train, y_train)
        nodes.append(clf.node_count_)
        accuracy.append(clf.score(X_test, y_test))
    ax.plot(nodes, accuracy, marker="o", label=label)
    print(label, list(zip(nodes, [round(a, 3) for a in accuracy])))
ax.set_xscale("log")
ax.set_xlabel("total nodes")
ax.set_ylabel("test accuracy")
ax.set_title("digits: 4 DAGs or trees, depths 4 to 15")
ax.legend()
fig.tight_layout()
plt.show()
