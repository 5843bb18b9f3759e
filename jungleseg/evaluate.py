"""Segmentation scores: PASCAL VOC Jaccard from one confusion matrix over a test set."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def confusion_matrix(truth, predicted, classes, ignore=(255,)) -> np.ndarray:
    """Counts over label images: rows = true class, columns = predicted class.

    Returns a (C, C + 1) matrix whose last column counts pixels predicted as none of
    the classes (false negatives all the same). Pixels whose true value is in ``ignore``
    or not in ``classes`` are left out.
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

    def as_dict(self, class_names=None) -> dict:
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


def evaluate(truth, predicted, classes, ignore=(255,)) -> Scores:
    """Scores of predicted label images against the truth."""
    return scores(confusion_matrix(truth, predicted, classes, ignore))
