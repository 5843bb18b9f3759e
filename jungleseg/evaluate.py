"""Segmentation scores: PASCAL VOC Jaccard from one confusion matrix over a test set."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import zip_longest

import numpy as np
from numpy.typing import ArrayLike

from .features import DepthFeatures
from .jungle import Jungle
from .jungle._model import checked_jungle
from .segmentation import segment

_MISSING = object()  # what zip_longest gives for an image one of two sequences lacks


def confusion_matrix(truth: Sequence[ArrayLike], predicted: Sequence[ArrayLike],
                     classes: ArrayLike, ignore: Sequence[int] = (255,)) -> np.ndarray:
    """Counts over label images: rows = true class, columns = predicted class.

    Parameters
    ----------
    truth, predicted : sequences of label images (arrays of the same shapes)
    classes : sequence of class values
    ignore : sequence of values
        True values never counted (void).

    Returns
    -------
    ndarray of shape (C, C + 1), int64
        The last column counts pixels predicted as none of the classes (false
        negatives all the same). Pixels whose true value is in ``ignore`` or not in
        ``classes`` are left out.

    Examples
    --------
    >>> confusion_matrix([np.array([0, 1, 255])], [np.array([0, 0, 1])], [0, 1])
    array([[1, 0, 0],
           [1, 0, 0]])
    """
    classes = np.asarray(classes)
    n = len(classes)
    total = np.zeros((n, n + 1), np.int64)
    for i, (t, p) in enumerate(zip_longest(truth, predicted, fillvalue=_MISSING)):
        if t is _MISSING or p is _MISSING:
            raise ValueError("truth and predicted hold different numbers of label images: "
                             f"image {i} has no {'truth' if t is _MISSING else 'prediction'}")
        t, p = np.asarray(t), np.asarray(p)
        if t.shape != p.shape:
            raise ValueError(f"image {i}: truth and prediction shapes differ: {t.shape} vs "
                             f"{p.shape}")
        t, p = t.ravel(), p.ravel()
        ti = _index(t, classes, ignore)
        pi = _index(p, classes, ())
        keep = ti >= 0
        pi = np.where(pi >= 0, pi, n)
        counts = np.bincount(ti[keep] * (n + 1) + pi[keep], minlength=n * (n + 1))
        total += counts.reshape(n, n + 1)
    return total


def _index(values, classes, ignore):
    out = np.full(values.shape, -1, np.int64)
    for k, v in enumerate(classes):
        if v not in ignore:
            out[values == v] = k
    return out


@dataclass
class Scores:
    """Per-class Jaccard (IoU), their mean, global pixel accuracy, mean class accuracy."""

    per_class_jaccard: np.ndarray
    mean_jaccard: float
    pixel_accuracy: float
    mean_class_accuracy: float
    confusion: np.ndarray

    def as_dict(self, class_names: Sequence[str] | None = None) -> dict:
        """The scores under stable JSON keys; per-class Jaccard by class name."""
        names = class_names if class_names is not None else range(len(self.per_class_jaccard))
        return {
            "mean_jaccard": self.mean_jaccard,
            "per_class_jaccard": {str(k): float(v) for k, v in zip(names,
                                                                  self.per_class_jaccard)},
            "pixel_accuracy": self.pixel_accuracy,
            "mean_class_accuracy": self.mean_class_accuracy,
        }


def scores(confusion: np.ndarray) -> Scores:
    """VOC Jaccard ``TP / (TP + FP + FN)`` per class and its mean over classes that occur
    in the truth or the predictions; accuracies from the same matrix."""
    confusion = np.asarray(confusion, np.float64)
    n = confusion.shape[0]
    tp = np.diag(confusion[:, :n])
    truth = confusion.sum(axis=1)
    predicted = confusion[:, :n].sum(axis=0)
    union = truth + predicted - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        jaccard = np.where(union > 0, tp / union, np.nan)
        recall = np.where(truth > 0, tp / truth, np.nan)
    return Scores(
        per_class_jaccard=jaccard,
        mean_jaccard=float(np.nanmean(jaccard)),
        pixel_accuracy=float(tp.sum() / max(confusion.sum(), 1)),
        mean_class_accuracy=float(np.nanmean(recall)),
        confusion=confusion.astype(np.int64),
    )


def evaluate(truth: Sequence[ArrayLike], predicted: Sequence[ArrayLike], classes: ArrayLike,
             ignore: Sequence[int] = (255,)) -> Scores:
    """Scores of predicted label images against the truth.

    Parameters
    ----------
    truth, predicted, classes, ignore
        As for :func:`confusion_matrix`.

    Returns
    -------
    Scores

    Examples
    --------
    >>> evaluate([np.array([0, 1, 1])], [np.array([0, 1, 0])], [0, 1]).mean_jaccard
    0.5
    """
    return scores(confusion_matrix(truth, predicted, classes, ignore))


def class_mismatch(jungle: Jungle, class_names: dict, ignore: Sequence[int] = ()
                   ) -> str | None:
    """Why a model does not fit a dataset's classes ``{value: name}``, or None: every
    class of the model must be a class of the dataset and, where the model stores names,
    have the dataset's name. Values in ``ignore`` (void, and the background of depth
    frames) are not classes of either. A dataset class the model lacks is no mismatch: it
    is scored (:func:`evaluate_jungle`).

    >>> class_mismatch(Jungle([], np.arange(2), None, {}, {"class_names": {"0": "sky",
    ...     "1": "tree"}}), {0: "sky", 1: "hair"})
    "class 1 is 'tree' in the model but 'hair' in the dataset"
    """
    skip = {int(v) for v in ignore}
    ours = [int(c) for c in jungle.classes if int(c) not in skip]
    theirs = sorted(int(v) for v in class_names if int(v) not in skip)
    extra = [v for v in ours if v not in theirs]
    if extra:
        return f"the model's classes {extra} are not classes of the dataset ({theirs})"
    names = jungle.metadata.get("class_names") or {}
    for value in ours:
        name = names.get(str(value))
        if name is not None and str(name) != str(class_names[value]):
            return (f"class {value} is {str(name)!r} in the model but "
                    f"{str(class_names[value])!r} in the dataset")
    return None


def default_ignore(jungle: Jungle) -> tuple[int, ...]:
    """Label values a model's scores leave out unless told otherwise: 255 (void), and 0
    (the background) for depth models."""
    return (255, 0) if isinstance(jungle.family, DepthFeatures) else (255,)


def evaluate_jungle(jungle: Jungle, images: Sequence[ArrayLike], labels: Sequence[ArrayLike],
                    progress: bool = False,
                    on_error: Callable[[int, Exception], None] | None = None,
                    predicted: Sequence | None = None, ignore: Sequence[int] | None = None,
                    class_names: dict | None = None) -> tuple[Scores, dict]:
    """Segment images with a jungle and score the result against their label images.

    Parameters
    ----------
    jungle : Jungle
        A trained or loaded model.
    images, labels : sequences of arrays
        Test images and their label images; 255 is void (and, for depth models, 0 the
        background, which is never classified).
    progress : bool
        Show a progress bar.
    on_error : callable, optional
        ``on_error(i, error)`` is called for an image ``i`` that cannot be segmented
        (a ValueError or MemoryError), which is then left out of the scores; without it
        the error is raised.
    predicted : sequence, optional
        Each image's labels computed already (elsewhere, e.g. on a cluster:
        :func:`jungleseg.distributed.segment_images`), or the error it raised.
    ignore : sequence of int, optional
        Label values left out of the scores (default 255, and 0 for depth models); a
        model trained on a user's folders passes its own ``ignore``.
    class_names : dict, optional
        ``{value: name}`` of the test set, to name classes the model never saw.

    Returns
    -------
    scores : Scores
    report : dict
        The stable keys of ``jungleseg evaluate --json``: ``mean_jaccard``,
        ``per_class_jaccard`` (by class name), ``pixel_accuracy``,
        ``mean_class_accuracy``, ``nodes``, ``bytes``, ``max_feature_evaluations``,
        ``classes``, ``unseen_classes`` and ``n_images``. A class of the test labels that
        the model never saw (not in ``ignore``) is scored all the same: its Jaccard is 0,
        it counts in the mean, and ``unseen_classes`` lists it.
    """
    from ._progress import progress_bar

    jungle = checked_jungle(jungle, "evaluate_jungle")
    given, predicted, truth = predicted, [], []
    for i, image in enumerate(progress_bar(images, desc="evaluating", disable=not progress)):
        try:
            if given is None:
                predicted.append(segment(jungle, image, probabilities=False)[0])
            elif isinstance(given[i], Exception):
                raise given[i]
            else:
                predicted.append(given[i])
        except (ValueError, MemoryError) as error:
            if on_error is None:
                raise
            on_error(i, error)
            continue
        truth.append(labels[i])
    ignore = tuple(int(v) for v in (default_ignore(jungle) if ignore is None else ignore))
    classes = [int(c) for c in jungle.classes]
    present = np.unique(np.concatenate([np.unique(t) for t in truth])) if truth else []
    unseen = [int(v) for v in present if int(v) not in classes and int(v) not in ignore]
    names = [*jungle.class_names, *(str((class_names or {}).get(v, v)) for v in unseen)]
    result = evaluate(truth, predicted, classes + unseen, ignore=ignore)
    report = result.as_dict(names)
    report.update(nodes=jungle.node_count, bytes=jungle.nbytes,
                  max_feature_evaluations=jungle.max_feature_evaluations,
                  classes=classes, unseen_classes=unseen, n_images=len(predicted))
    return result, report


def plot_confusion(confusion: np.ndarray, names: Sequence[str], path: str | os.PathLike
                   ) -> None:
    """Save a confusion matrix as a PNG of two panels side by side: rows normalised
    (recall: where each true class went) and columns normalised (precision: what each
    predicted class really was), so that a class predicted everywhere shows as a full
    column. Each cell gives its percentage, each axis label the class's pixel count, and
    a colour bar the scale. The last column of :func:`confusion_matrix` (predicted as
    none of the classes) is left out."""
    from matplotlib.figure import Figure

    counts = np.asarray(confusion)[:, :len(names)].astype(float)
    recall = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    precision = counts / np.maximum(counts.sum(axis=0, keepdims=True), 1)
    n = len(names)
    side = 1.0 + 0.42 * n
    fig = Figure(figsize=(2 * side + 3.0, side + 1.6))
    axes = fig.subplots(1, 2)
    font = max(4.0, min(8.0, 90 / max(n, 1)))
    for ax, share, title in ((axes[0], recall, "recall: rows sum to 100 %"),
                             (axes[1], precision, "precision: columns sum to 100 %")):
        image = ax.imshow(100 * share, cmap="Blues", vmin=0, vmax=100)
        for (i, j), value in np.ndenumerate(share):
            if counts[i, j]:
                ax.text(j, i, f"{100 * value:.0f}", ha="center", va="center", fontsize=font,
                        color="white" if value > 0.6 else "black")
        ax.set_xticks(range(n), [f"{name} ({int(c):,})" for name, c in
                                 zip(names, counts.sum(axis=0))], rotation=90, fontsize=font)
        ax.set_yticks(range(n), [f"{name} ({int(c):,})" for name, c in
                                 zip(names, counts.sum(axis=1))], fontsize=font)
        ax.set_xlabel("predicted class (pixels)")
        ax.set_ylabel("true class (pixels)")
        ax.set_title(title, fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="% of pixels")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
