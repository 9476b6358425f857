"""Evaluation of word embeddings: intrinsic (similarity, analogy, relational similarity, categorization,
neighbours: ``staticvec.evaluate.intrinsic``) and extrinsic (tagging, sentence classification)."""
