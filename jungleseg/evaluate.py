"""Segmentation scores: PASCAL VOC Jaccard from one confusion matrix over a test set."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .features import DepthFeatures
from .jungle import Jungle
from .segmentation import segment


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
    for t, p in zip(truth, predicted):
        t = np.asarray(t).ravel()
        p = np.asarray(p).ravel()
        if t.shape != p.shape:
            raise ValueError(f"truth and prediction shapes differ: {t.shape} vs {p.shape}")
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


def class_mismatch(jungle: Jungle, class_names: dict) -> str | None:
    """Why a model's classes do not match a dataset's ``{value: name}``, or None: both
    must have the same class values and, where the model stores names, the same names.

    >>> class_mismatch(Jungle([], np.arange(2), None, {}, {"class_names": {"0": "sky",
    ...     "1": "tree"}}), {0: "sky", 1: "hair"})
    "class 1 is 'tree' in the model but 'hair' in the dataset"
    """
    ours = [int(c) for c in jungle.classes]
    theirs = sorted(int(v) for v in class_names)
    missing = [v for v in theirs if v not in ours]
    extra = [v for v in ours if v not in theirs]
    if extra:
        return f"the model's classes {extra} are not classes of the dataset ({theirs})"
    if missing:
        return f"the dataset's classes {missing} are not among the model's ({ours})"
    names = jungle.metadata.get("class_names") or {}
    for value in ours:
        name = names.get(str(value))
        if name is not None and str(name) != str(class_names[value]):
            return (f"class {value} is {str(name)!r} in the model but "
                    f"{str(class_names[value])!r} in the dataset")
    return None


def evaluate_jungle(jungle: Jungle, images: Sequence[ArrayLike], labels: Sequence[ArrayLike],
                    progress: bool = False, on_error: Callable[[int, Exception], None] | None = None,
                    predicted: Sequence | None = None, ignore: Sequence[int] | None = None
                    ) -> tuple[Scores, dict]:
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

    Returns
    -------
    scores : Scores
    report : dict
        The stable keys of ``jungleseg evaluate --json``: ``mean_jaccard``,
        ``per_class_jaccard`` (by class name), ``pixel_accuracy``,
        ``mean_class_accuracy``, ``nodes``, ``bytes``, ``max_feature_evaluations``,
        ``classes`` and ``n_images``.
    """
    from ._progress import progress_bar

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
    if ignore is None:
        ignore = (255, 0) if isinstance(jungle.family, DepthFeatures) else (255,)
    result = evaluate(truth, predicted, jungle.classes, ignore=tuple(ignore))
    report = result.as_dict(jungle.class_names)
    report.update(nodes=jungle.node_count, bytes=jungle.nbytes,
                  max_feature_evaluations=jungle.max_feature_evaluations,
                  classes=[int(c) for c in jungle.classes], n_images=len(predicted))
    return result, report


def plot_confusion(confusion: np.ndarray, names: Sequence[str], path: str | os.PathLike
                   ) -> None:
    """Save a confusion matrix (rows: true class, normalised) as a PNG; the last column of
    :func:`confusion_matrix` (predicted as none of the classes) is left out."""
    from matplotlib.figure import Figure

    counts = np.asarray(confusion)[:, :len(names)].astype(float)
    rows = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    fig = Figure(figsize=(1.5 + 0.4 * len(names), 1.2 + 0.4 * len(names)))
    ax = fig.add_subplot()
    ax.imshow(rows, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title("confusion (rows normalised)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
