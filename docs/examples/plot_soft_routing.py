"""
Soft routing and calibration
============================

Hard routing sends a pixel down one path of each DAG. Soft routing turns each split into a
sigmoid gate whose temperature is a factor times the node's training-response spread, and
weighs every path (factor 0 is hard routing). Probabilities get smoother, which lowers the
log loss and brings the confidence closer to the accuracy. Here on held-out synthetic faces,
with the reliability diagram of each.
"""

import matplotlib.pyplot as plt
import numpy as np

from jungleseg import ColourFeatures, JungleSegmenter, segment
from jungleseg.datasets.faces import render_faces

train_images, train_labels = render_faces(16, seed=0, size=(64, 80))
test_images, test_labels = render_faces(4, seed=1, size=(64, 80))
seg = JungleSegmenter(ColourFeatures(max_offset=16, max_box=3), n_estimators=3,
                      max_width=64, max_depth=12, samples_per_image=400,
                      random_state=0).fit(train_images, train_labels)
truth = np.concatenate([t.ravel() for t in test_labels])
index = np.searchsorted(seg.classes_, truth)

fig, ax = plt.subplots(figsize=(5, 4.5))
ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
for soft in (0.0, 0.05, 0.2):
    proba = np.concatenate([segment(seg.jungle_, image, soft=soft, soft_epsilon=0.01)[1]
                            .reshape(-1, len(seg.classes_)) for image in test_images])
    log_loss = -np.mean(np.log(np.clip(proba[np.arange(len(index)), index], 1e-6, None)))
    confidence, correct = proba.max(axis=1), proba.argmax(axis=1) == index
    bins = np.minimum((confidence * 10).astype(int), 9)
    filled = [b for b in range(10) if np.any(bins == b)]
    ax.plot([confidence[bins == b].mean() for b in filled],
            [correct[bins == b].mean() for b in filled], marker="o",
            label=f"soft {soft}: log loss {log_loss:.3f}")
    print(f"soft {soft}: log loss {log_loss:.3f}, accuracy {correct.mean():.3f}")
ax.set_xlabel("confidence (winning probability)")
ax.set_ylabel("accuracy")
ax.set_title("reliability on held-out faces")
ax.legend(fontsize="small")
fig.tight_layout()
plt.show()
