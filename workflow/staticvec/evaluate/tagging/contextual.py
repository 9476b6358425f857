"""The contextual baseline row (the papers' "BERT-base"): a teacher's frozen per-token vectors as tagger input.

Each task sentence is run once through the teacher (``staticvec.teacher``: the same loading,
piece-word alignment and batched extraction every method uses); a word's vector is the mean
of its pieces' states at ``layer``, in the context of its own sentence. The tagger on top is
the same BiLSTM-CRF, so the row differs from the static rows by its input only; the teacher
is not fine-tuned (the papers' BERT-base rows may be; the table says which).

The teacher sees the words as written (an uncased teacher lower-cases them itself), with Penn
Treebank escapes undone (``-LRB-`` → ``(``, ````` → ``"``) and spaces inside a word as ``_``.
"""

from __future__ import annotations

import logging

import numpy as np

from staticvec.evaluate.tagging.data import TaskData
from staticvec.evaluate.tagging.features import PTB_UNESCAPE
from staticvec.evaluate.tagging.inputs import ContextualInputs

log = logging.getLogger(__name__)


def contextual_inputs(teacher_spec, data: TaskData, layer: int = -1, device: str = "auto", batch_tokens: int = 8192,
                      offline: bool = True, max_train_sentences: int | None = None) -> ContextualInputs:
    """Per-token teacher vectors for every sentence of dev and test and for the training sentences the
    tagger trains on (the first ``max_train_sentences``, as ``train_tagger`` takes them; all if None):
    the teacher pass is the contextual row's largest cost, and at the laptop budget it would otherwise
    encode twice (CoNLL-2000) to three times (UD EWT) the training sentences used."""
    from staticvec.teacher.load import load_teacher

    teacher = teacher_spec if hasattr(teacher_spec, "tokenizer") else load_teacher(teacher_spec, device=device, offline=offline)
    splits = data.splits()
    if max_train_sentences:
        splits["train"] = splits["train"][:max_train_sentences]
    features, pieces = {}, 0
    for split, sentences in splits.items():
        vectors, n_missing = sentence_vectors(teacher, [s.words for s in sentences], layer, batch_tokens)
        features[split] = vectors
        pieces += n_missing
    if pieces:
        log.warning("%d token(s) got no teacher piece (zero vectors)", pieces)
    describe = getattr(teacher, "describe", lambda: {"name": str(teacher_spec)})()
    return ContextualInputs(features, description={"teacher": describe, "layer": layer, "tokens_without_pieces": pieces,
                                                   "sentences": {split: len(v) for split, v in features.items()}})


def sentence_vectors(teacher, sentences, layer: int = -1, batch_tokens: int = 8192) -> tuple[list[np.ndarray], int]:
    """(one (len, dim) float16 array per sentence, number of tokens without any piece)."""
    from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part

    spec = FeatureSpec(context="sentence", layers=(layer,), vector_dtype="float16")
    extractor = FeatureExtractor(teacher, spec, batch_tokens=batch_tokens)
    # the teacher sees " ".join(words): a space inside a word would split it
    words = [[PTB_UNESCAPE.get(w, w).replace(" ", "_") for w in s] for s in sentences]
    n = len(words)
    part = Part(0, sentences=words, records=list(range(n)), paragraphs=list(range(n)))
    arrays = extractor.extract(part)
    (key,) = [k for k in arrays if k.startswith("word_vectors.")]
    flat, offsets = arrays[key], arrays["sentence_offsets"]
    missing = int((arrays["word_pieces"] == 0).sum())
    return [flat[offsets[i] : offsets[i + 1]] for i in range(n)], missing
