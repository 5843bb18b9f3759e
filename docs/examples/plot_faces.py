"""
Segmenting synthetic faces
==========================

The demo's task in a few lines: train a small jungle on rendered faces of 8 classes
(background, skin, hair, eyebrows, eyes, nose, lips, inner mouth), segment held-out faces
and compare with the truth.
"""

import matplotlib.pyplot as plt
import numpy as np

from jungleseg import ColourFeatures, JungleSegmenter, evaluate
from jungleseg.datasets.faces import CLASS_COLOURS, CLASS_NAMES, render_faces

train_images, train_labels = render_faces(24, seed=0, size=(96, 128))
test_images, test_labels = render_faces(3, seed=1, size=(96, 128))

seg = JungleSegmenter(ColourFeatures(max_offset=24, max_box=4, position=True),
                      n_estimators=3, max_width=64, max_depth=12, samples_per_image=400,
                      smoothing=2, random_state=0)
seg.fit(train_images, train_labels)
predicted = [seg.predict(image) for image in test_images]
result = evaluate(test_labels, predicted, seg.classes_)
print(f"mean Jaccard {result.mean_jaccard:.3f}, pixel accuracy "
      f"{100 * result.pixel_accuracy:.1f} %, {seg.jungle_.node_count} nodes")

# %%
# Each row: a test face, its truth, the jungle's labels. Colours are the data set's class
# colours.
palette = np.asarray(CLASS_COLOURS, dtype=np.uint8)
fig, axes = plt.subplots(3, 3, figsize=(7, 6))
for row, (image, truth, labels) in enumerate(zip(test_images, test_labels, predicted)):
    for ax, shown, title in zip(axes[row], (image, palette[truth], palette[labels]),
                                ("image", "truth", "jungle")):
        ax.imshow(shown)
        ax.set_axis_off()
        if row == 0:
            ax.set_title(title)
fig.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=np.asarray(c) / 255)
                    for c in CLASS_COLOURS], labels=list(CLASS_NAMES), loc="lower center",
           ncol=4, fontsize="small")
fig.tight_layout(rect=(0, 0.08, 1, 1))
plt.show()
