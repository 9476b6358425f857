"""Evaluation of word embeddings: intrinsic (similarity, analogy, ...) and extrinsic (tagging, classification)."""
