"""Evaluation of static embeddings: intrinsic (similarity, analogy, categorization, ...) and extrinsic (tagging, classification)."""
