"""Writes tests/data/model_format2_colour.h5 and model_format3_context.h5 (models of
float32 channel stores) and their expected segmentations.

Run once with the code of main before quantised channel stores (commit d8200b5), from
the repository root: ``python tests/data/make_float32_fixtures.py``. The files pin what
models of the float32 stores segment; later code must load them and segment the same.
"""
from pathlib import Path

import numpy as np

from jungleseg import JungleSegmenter, save_model, segment
from jungleseg.features import ColourFeatures

HERE = Path(__file__).resolve().parent


def scene(seed: int, h: int = 40, w: int = 48):
    """A small RGB image of two regions with noise, and its labels."""
    rng = np.random.default_rng(seed)
    labels = np.zeros((h, w), np.uint8)
    labels[:, w // 2:] = 1
    labels[h // 3:2 * h // 3, w // 4:w // 2] = 2
    colours = np.array([[200, 60, 40], [40, 160, 60], [50, 60, 200]], np.float64)
    image = colours[labels] + rng.normal(0, 40, (h, w, 3))
    return np.clip(image, 0, 255).astype(np.uint8), labels


def main() -> None:
    train = [scene(s) for s in range(4)]
    images, labels = [t[0] for t in train], [t[1] for t in train]
    test = scene(99)[0]
    models = {
        "colour": JungleSegmenter(
            ColourFeatures(max_offset=6, max_box=2, gradient=True, box_filters=(2,),
                           position=True),
            n_estimators=2, max_depth=6, n_candidate_features=20, samples_per_image=300,
            smoothing=1, random_state=1),
        "context": JungleSegmenter(
            ColourFeatures(max_offset=4, kinds=("value", "difference", "box_value"),
                           max_box=2, filters=("gaussian", "log"), filter_scales=(1.0,)),
            n_estimators=2, max_depth=5, n_candidate_features=16, samples_per_image=200,
            auto_context=2, context_folds=2, random_state=2),
    }
    for name, model in models.items():
        model.fit(images, labels)
        stem = f"model_format{2 if name == 'colour' else 3}_{name}"
        path = save_model(model.jungle_, HERE / f"{stem}.h5")
        got, proba = segment(model.jungle_, test)
        np.savez_compressed(HERE / f"{stem}_expected.npz", image=test,
                            labels=got, proba=proba)
        print(path, np.bincount(got.ravel()))


if __name__ == "__main__":
    main()
