"""Trainers of static word embeddings (see each module)."""
