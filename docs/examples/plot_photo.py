"""
Segmenting a photo from a few strokes
=====================================

A photo from scikit-image (the astronaut), three classes painted as a few rectangles
(background, suit, face and hair), a jungle trained on the painted pixels only, and the whole
photo segmented. Edge-aware smoothing (``guided_eps``) puts the boundaries on image edges.
"""

import matplotlib.pyplot as plt
import numpy as np
from skimage import data
from skimage.transform import rescale

from jungleseg import ColourFeatures, JungleSegmenter

photo = rescale(data.astronaut(), 0.5, channel_axis=2, anti_aliasing=True)  # floats in [0, 1]
strokes = np.zeros(photo.shape[:2], dtype=np.uint8)   # 0: unpainted
strokes[10:40, 10:60] = 1       # background: the flag,
strokes[30:90, 160:180] = 1     # the wall,
strokes[60:120, 215:235] = 1    # the shuttle
strokes[190:250, 40:90] = 2     # suit
strokes[160:200, 150:170] = 2
strokes[60:95, 105:135] = 3     # face
strokes[25:40, 100:140] = 3     # hair

seg = JungleSegmenter(ColourFeatures(max_offset=24, kinds=("value", "difference", "absdiff"),
                                     box_filters=(2, 4, 8)),
                      n_estimators=3, max_width=64, max_depth=10, sampling="balanced",
                      samples_per_image=4000, ignore=(0,), smoothing=6, guided_eps=0.1,
                      random_state=0).fit([photo], [strokes])
labels = seg.predict(photo)
uncertainty = 1 - seg.predict_proba(photo).max(axis=2)

# One colour per class, the same for the strokes and the labels.
names = ["background", "suit", "face and hair"]
colours = np.array([[0, 0, 0], [70, 130, 180], [60, 179, 113], [220, 20, 60]]) / 255
fig, axes = plt.subplots(1, 3, figsize=(10, 4.2))
axes[0].imshow(photo)
painted = np.zeros(strokes.shape + (4,))
painted[..., :3] = colours[strokes]
painted[..., 3] = 0.8 * (strokes > 0)
axes[0].imshow(painted)
axes[0].set_title("photo and strokes")
axes[1].imshow(colours[labels])
axes[1].set_title("jungle labels")
shown = axes[2].imshow(uncertainty, cmap="magma", vmin=0, vmax=1)
axes[2].set_title("uncertainty (1 - top probability)")
fig.colorbar(shown, ax=axes[2], fraction=0.046, pad=0.04)
for ax in axes:
    ax.set_axis_off()
fig.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colour) for colour in colours[1:]],
           labels=names, loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.08, 1, 1))
plt.show()
