"""The teacher layer: contextual features from a transformer, read by every distillation method.

- :mod:`~staticvec.teacher.load`: resolve and load a teacher (hub name, local directory, the
  offline MiniLM and SmolLM2 packages, GGUF files) with its tokenizer, family and MLM head;
- :mod:`~staticvec.teacher.align`: pieces ↔ corpus words by character offsets;
- :mod:`~staticvec.teacher.features`: the one extraction path (word vectors per layer, sentence
  means, attention window weights, MLM top-k, ASE sums), batched by length, written per shard;
- :mod:`~staticvec.teacher.store`: the per-shard feature files (resumable parts + JSON sidecar)
  and their readers;
- :mod:`~staticvec.teacher.mlm_head`: fit an MLM head on an encoder that ships without one;
- :mod:`~staticvec.teacher.baselines`: token table, ``_word`` and ASE embeddings.

Everything heavy (torch, transformers) is imported inside these modules, never here.
"""
