"""
Scribbles on a micrograph
=========================

What the napari widget does after each stroke: a synthetic micrograph of cells, nuclei and
fibres (made by :func:`jungleseg.datasets.microscopy.render_cells`), sparse strokes painted
on 1.5 % of its pixels (:func:`jungleseg.datasets.scribbles.paint_scribbles`), and the napari
preset trained on them.
"""

import matplotlib.pyplot as plt
import numpy as np

from jungleseg import evaluate
from jungleseg.config import load_preset
from jungleseg.datasets.microscopy import render_cells
from jungleseg.datasets.scribbles import paint_scribbles

images, truth = render_cells(1, seed=0, size=(256, 256))
image, truth = images[0], truth[0]
strokes = paint_scribbles(truth, fraction=0.015, seed=0)

seg = load_preset("napari").with_overrides({"jungle.n_estimators": 2}).estimator()
seg.fit([image], [strokes])
labels = seg.predict(image)
print(f"mean Jaccard {evaluate([truth], [labels], seg.classes_).mean_jaccard:.3f}")

fig, axes = plt.subplots(1, 4, figsize=(11, 3))
axes[0].imshow(image, cmap="gray")
axes[0].set_title("micrograph")
axes[1].imshow(np.ma.masked_equal(strokes, 0), cmap="tab10", vmin=0, vmax=9,
               interpolation="nearest")
axes[1].set_title("strokes")
axes[2].imshow(labels, cmap="tab10", vmin=0, vmax=9, interpolation="nearest")
axes[2].set_title("jungle")
axes[3].imshow(truth, cmap="tab10", vmin=0, vmax=9, interpolation="nearest")
axes[3].set_title("truth")
for ax in axes:
    ax.set_axis_off()
fig.tight_layout()
plt.show()
