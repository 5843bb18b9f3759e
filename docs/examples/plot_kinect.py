"""
Kinect-style body parts from depth
==================================

Synthetic depth frames of bodies with 31 part labels
(:func:`jungleseg.datasets.kinect.render_frames`), and the depth-comparison features of
Shotton et al. (CVPR 2011): ``d(x + u/d(x)) - d(x + v/d(x))``, offsets in world metres.
Only foreground pixels are classified. The frames are streamed through
:func:`jungleseg.segment_frames`, as a camera's would be.
"""

import matplotlib.pyplot as plt
import numpy as np

from jungleseg import DepthFeatures, JungleSegmenter, evaluate, segment_frames
from jungleseg.datasets.kinect import CLASS_COLOURS, kinect_intrinsics, render_frames

size = (120, 160)
depth, parts = render_frames(60, seed=0, size=size)
focal = kinect_intrinsics(size)["fx"]
seg = JungleSegmenter(DepthFeatures(max_offset=0.45, focal_length=focal), n_estimators=3,
                      max_width=128, max_depth=14, samples_per_image=250, random_state=0)
seg.fit(list(depth[:50]), list(parts[:50]))
labels = [lab for lab, _ in segment_frames(seg.jungle_, depth[50:], probabilities=False)]
scores = evaluate(list(parts[50:]), labels, seg.classes_, ignore=(0, 255))
print(f"mean Jaccard over foreground parts {scores.mean_jaccard:.3f}, "
      f"{seg.jungle_.node_count} nodes")

palette = np.asarray(CLASS_COLOURS, dtype=np.uint8)


def coloured(labels):
    """Part colours; void (255) drawn as background."""
    return palette[np.where(labels < len(palette), labels, 0)]


fig, axes = plt.subplots(3, 3, figsize=(7, 6))
for row in range(3):
    frame = 50 + row
    shown = (np.where(depth[frame] > 0, depth[frame], np.nan), coloured(parts[frame]),
             coloured(labels[row]))
    for ax, image, title in zip(axes[row], shown, ("depth", "truth", "jungle")):
        ax.imshow(image, cmap="viridis_r" if image.ndim == 2 else None)
        ax.set_axis_off()
        if row == 0:
            ax.set_title(title)
fig.tight_layout()
plt.show()
