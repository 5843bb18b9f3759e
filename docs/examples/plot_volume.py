"""
A 3-D volume from strokes on two slices
=======================================

An anisotropic confocal-like stack (0.3 x 0.1 x 0.1 um voxels) of cells with nuclei and
membranes (:func:`jungleseg.datasets.cells3d.render_cell_volume`). Strokes are painted on two
slices only; :class:`jungleseg.VolumeFeatures` probes in micrometres, so its offsets reach as
far along z as within a slice, and the whole volume is segmented in 3-D tiles.
"""

import matplotlib.pyplot as plt
import numpy as np

from jungleseg import JungleSegmenter, VolumeFeatures, evaluate, segment
from jungleseg.datasets.cells3d import CLASS_NAMES, NUCLEUS, paint_slices, render_cell_volume

volume, truth = render_cell_volume((24, 96, 96), seed=0)
strokes = paint_slices(truth, [8, 16], fraction=0.03)
features = VolumeFeatures(spacing=(0.3, 0.1, 0.1), max_offset=1.0,
                          smoothing_scales=(0.2, 0.5, 1.0))
seg = JungleSegmenter(features, n_estimators=2, max_depth=10, sampling="balanced",
                      ignore=(0,), random_state=0).fit([volume], [strokes])
labels, _ = segment(seg.jungle_, volume, tile=(12, 64, 64), probabilities=False)
print(f"mean Jaccard over the volume {evaluate([truth], [labels], seg.classes_).mean_jaccard:.3f}")

# %%
# A slice that was painted, one that was not, and a cut along z (x-z plane, stretched to the
# voxels' physical aspect) through the row that holds the most nucleus voxels.
y = int((truth == NUCLEUS).sum(axis=(0, 2)).argmax())
fig, axes = plt.subplots(3, 3, figsize=(8, 7.5))
views = {"slice 8 (painted)": np.s_[8], "slice 12 (not painted)": np.s_[12],
         f"x-z cut at y = {y}": np.s_[:, y]}
for column, (title, where) in enumerate(views.items()):
    aspect = 3.0 if column == 2 else 1.0
    axes[0, column].imshow(volume[where], cmap="gray", aspect=aspect)
    axes[0, column].set_title(title)
    axes[1, column].imshow(truth[where], cmap="viridis", vmin=0, vmax=3, aspect=aspect,
                           interpolation="nearest")
    axes[2, column].imshow(labels[where], cmap="viridis", vmin=0, vmax=3, aspect=aspect,
                           interpolation="nearest")
for ax, name in zip(axes[:, 0], ("volume", "truth", "jungle")):
    ax.set_ylabel(name)
for ax in axes.ravel():
    ax.set_xticks([])
    ax.set_yticks([])
colours = plt.get_cmap("viridis")(np.arange(1, 4) / 3)
fig.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colour) for colour in colours],
           labels=list(CLASS_NAMES), loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.05, 1, 1))
plt.show()
