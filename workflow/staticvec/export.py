"""``staticvec export``: an embedding of a run as files the tools users already have read.

- a gensim ``KeyedVectors`` file (``*.kv``: ``KeyedVectors.load``; words, vectors and corpus counts);
- a Model2Vec ``StaticModel`` directory over a word-level tokenizer of the embedding's words
  (``StaticModel.from_pretrained``; sentence-transformers reads it as ``SentenceTransformer(dir)`` or
  ``StaticEmbedding.from_model2vec(dir)``), with a model card (its ``README.md``) saying which corpus,
  teacher, method, seed and commit made the vectors and their headline scores in this run's evaluation.

Both are written by the one embedding I/O (:class:`staticvec.embeddings.Embeddings`, formats ``keyedvectors``
and ``model2vec``); this module writes the card. The workflow's rule ``export`` (not built by default) makes
``<results>/export/<id>/seed<s>/vectors.kv`` and ``.../model2vec/`` of any embedding of the sheet.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)

#: the task kinds whose scores a card shows (of the run summary's data sets, where the run evaluated them)
HEADLINE_TASKS = ("similarity", "analogy")
PROTOCOL_WORDS = {"web": "OOV words as the mean vector", "muse": "pairs with OOV words dropped, first 200k words",
                  "drop": "pairs with OOV words dropped"}


@dataclasses.dataclass
class Provenance:
    """What made an embedding: the sheet's entry and the run's record (``provenance.json``)."""

    embedding: str = "embedding"
    seed: int | None = None
    method: str | None = None
    description: str = ""
    teacher: str | None = None  # "<id> (<model>)" of a teacher-based method; None: none read
    fraction: float = 1.0
    run: dict = dataclasses.field(default_factory=dict)  # provenance.json: corpus_stats, git_commit, config_hash, date


def headline_scores(results: dict[str, dict]) -> dict[str, list[tuple[str, float, int | None, int | None]]]:
    """Per protocol: (data set label, score ×100, found, total) of the summary's data sets of a
    :data:`HEADLINE_TASKS` kind (evaluate.datasets.DATASETS, in its order) that the result holds."""
    from staticvec.evaluate.datasets import DATASETS
    from staticvec.report.tables import result_value

    headline = [d.name for d in DATASETS.values() if d.in_summary and d.task in HEADLINE_TASKS]
    out = {}
    for protocol, result in results.items():
        rows = []
        for name in headline:
            value, found, total = result_value(result, name)
            if value is not None:
                rows.append((DATASETS[name].label, 100 * value, found, total))
        out[protocol] = rows
    return out


def model_card(emb: Embeddings, info: Provenance, results: dict[str, dict] | None = None) -> str:
    """The Model2Vec directory's README.md: front matter the hub and ``StaticModel`` read, then provenance,
    scores and how to load the vectors."""
    from staticvec import __version__

    run = info.run or {}
    corpus = run.get("corpus_stats") or {}
    lowercase = all(w == w.lower() for w in emb.words)
    title = info.embedding + (f" (seed {info.seed})" if info.seed is not None else "")
    lines = ["---", "library_name: model2vec", "tags:", "- embeddings", "- static-embeddings", "- word-embeddings",
             "- sentence-transformers", "- staticvec", "---", "",
             f"# {title}: static word embeddings made by staticvec", ""]
    if info.description:
        lines += [info.description.rstrip(".") + ".", ""]
    what = [("embedding", f"`{info.embedding}` (the run's embeddings sheet)"),
            ("method", f"`{info.method}`" if info.method else "—"),
            ("seed", "—" if info.seed is None else str(info.seed)),
            ("teacher", info.teacher or "none (a method without a contextual teacher)"),
            ("corpus", _corpus_words(corpus, info.fraction)),
            ("words × dimensions", f"{len(emb):,} × {emb.dim}"),
            ("made by", _made_by(run, __version__))]
    lines += ["| | |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in what), ""]
    scores = headline_scores(results or {})
    if any(scores.values()):
        lines += ["## Scores in this run's evaluation", "",
                  "Spearman ρ ×100 (similarity) or accuracy ×100 (analogy), with coverage: items whose words are all in "
                  "the vocabulary, of all.", ""]
        for protocol, rows in scores.items():
            if not rows:
                continue
            lines += [f"Protocol `{protocol}`" + (f" ({PROTOCOL_WORDS[protocol]})" if protocol in PROTOCOL_WORDS else "")
                      + ":", "", "| data set | score | coverage |", "| --- | ---: | ---: |"]
            lines += [f"| {label} | {score:.1f} | {_coverage(found, total)} |" for label, score, found, total in rows]
            lines.append("")
    lines += ["## Use", "",
              "Words are the corpus's tokens: text is split on whitespace only"
              + (" and lower-cased" if lowercase else "") + ", so tokenize it as the corpus was "
              "(spaCy tokens joined by spaces: `don't` is `do n't`); a word outside the vocabulary is left out "
              "(Model2Vec) or a zero row (sentence-transformers' StaticEmbedding).", "",
              "```python", "from model2vec import StaticModel", "",
              'model = StaticModel.from_pretrained("PATH")  # this directory',
              'model.encode(["the cat sat on the mat"])  # unit-length mean of the words\' vectors',
              'StaticModel.from_pretrained("PATH", normalize=False).encode(["cat"])  # the word\'s vector itself',
              "", "from sentence_transformers import SentenceTransformer", "",
              'SentenceTransformer("PATH").encode(["the cat sat on the mat"])  # the same, unit length',
              "", "from gensim.models import KeyedVectors", "",
              'KeyedVectors.load("vectors.kv").most_similar("cat")  # the vectors.kv beside this directory',
              "```", ""]
    return "\n".join(lines)


def _corpus_words(corpus: dict, fraction: float) -> str:
    if not corpus:
        return "—"
    text = str(corpus.get("source") or "the run's corpus")
    sizes = [f"{corpus[k]:,} {k}" for k in ("tokens", "sentences") if corpus.get(k) is not None]
    if sizes:
        text += ": " + ", ".join(sizes)
    if corpus.get("vocabulary") is not None:
        text += f"; vocabulary {corpus['vocabulary']:,} words (count ≥ {corpus.get('min_count')})"
    if fraction < 1:
        text += f"; this embedding: the first {fraction:g} of its shards"
    return text


def _made_by(run: dict, version: str) -> str:
    parts = [f"staticvec {run.get('staticvec') or version}"]
    if run.get("git_commit"):
        parts.append(f"commit `{run['git_commit']}`")
    if run.get("config_hash"):
        parts.append(f"config `{run['config_hash']}`")
    if run.get("date"):
        parts.append(run["date"])
    return ", ".join(parts)


def _coverage(found, total) -> str:
    return "—" if found is None or total is None else f"{found}/{total}"


def export(vectors: str | Path, keyedvectors: str | Path | None = None, model2vec: str | Path | None = None,
           info: Provenance | None = None, results: dict[str, dict] | None = None) -> dict:
    """Write ``vectors`` (any format :class:`Embeddings` reads) as the formats asked for; returns what was written."""
    if keyedvectors is None and model2vec is None:
        raise StaticvecError("export: nothing to write (give a KeyedVectors file and/or a Model2Vec directory)")
    # both targets checked before anything is read or written: a folder staticvec did not write is never replaced
    if keyedvectors is not None and Path(keyedvectors).is_dir():
        raise StaticvecError(f"{keyedvectors}: is a folder; --keyedvectors names the file to write (e.g. "
                             f"{Path(keyedvectors) / 'vectors.kv'})")
    if model2vec is not None:
        from staticvec.embeddings import MODEL2VEC_KIND
        from staticvec.files import check_replaceable

        check_replaceable(model2vec, MODEL2VEC_KIND)
    emb = Embeddings.load(vectors)
    written = {"vectors": str(vectors), "words": len(emb), "dim": emb.dim}
    if keyedvectors is not None:
        emb.save(keyedvectors, "keyedvectors")
        written["keyedvectors"] = str(keyedvectors)
    if model2vec is not None:
        emb.save(model2vec, "model2vec", readme=model_card(emb, info or Provenance(), results))
        written["model2vec"] = str(model2vec)
    log.info("exported %s (%d words × %d): %s", vectors, len(emb), emb.dim,
             ", ".join(str(written[k]) for k in ("keyedvectors", "model2vec") if k in written))
    return written
