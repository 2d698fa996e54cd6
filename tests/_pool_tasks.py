"""Tasks that process pools run on pickled models (importable by spawned workers)."""

from __future__ import annotations


def predict(args):
    model, X = args
    return model.predict(X)
