"""Sentence splitting and tokenization with spaCy (a blank tokenizer of the corpus' language + sentencizer).

No spaCy model download is needed: ``corpus.language`` is any language spaCy builds a blank pipeline for
(``spacy.blank``: ``en`` by default; a few, such as ``ja`` or ``th``, need their segmenter's package;
``zh`` splits characters). Each paragraph is one spaCy ``Doc``; its sentences become shard records.
Tokens are lower-cased (by default), whitespace tokens dropped, and a sentence is a training sentence
(``keep``) when its token count is within the configured range (10–40 in the papers). Punctuation
tokens are kept by default and count towards the length, as in a tokenized one-sentence-per-line corpus.

X2Static's paragraph filter (Gupta & Jaggi §4: "we remove all paragraphs with less than 3
sentences or 140 characters", then lower-case and tokenize) is applied here, where the paper
applies it: on the raw paragraph, before the sentence-length filter — its sentences are the
sentencizer's (every one, of any length) and its characters those of the extracted text. A
removed paragraph is neither training text nor context (config ``corpus.paragraph_filter``;
null keeps every paragraph).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from staticvec.corpus.shards import Sentence
from staticvec.corpus.sources import Document
from staticvec.errors import StaticvecError


@dataclass(frozen=True)
class TokenizerSettings:
    lowercase: bool = True
    keep_punctuation: bool = True
    min_sentence_tokens: int = 10
    max_sentence_tokens: int = 40
    split_hyphens: bool = False
    min_paragraph_sentences: int = 0  # X2Static: 3 (0: no filter)
    min_paragraph_chars: int = 0  # X2Static: 140 (0: no filter)
    language: str = "en"  # spaCy language code of the blank tokenizer

    def keeps(self, n_tokens: int) -> bool:
        return self.min_sentence_tokens <= n_tokens <= self.max_sentence_tokens

    def keeps_paragraph(self, n_sentences: int, text: str) -> bool:
        """X2Static's paragraph filter on the raw paragraph: enough sentences and characters."""
        return n_sentences >= self.min_paragraph_sentences and len(text.strip()) >= self.min_paragraph_chars


def make_nlp(split_hyphens: bool = False, language: str = "en"):
    """Blank tokenizer of ``language`` + rule-based sentencizer.

    spaCy splits intra-word hyphens ("self-governed" → self - governed) in most languages; corpora for
    word vectors are usually tokenized PTB/Stanford style, which keeps hyphenated words whole, so the
    language's infix rules that split a hyphen between letters are dropped unless ``split_hyphens``
    (English: exactly its one hyphen rule; languages that keep such words whole, like German, lose nothing).
    """
    import spacy
    from spacy.lang.char_classes import ALPHA, HYPHENS
    from spacy.tokenizer import Tokenizer
    from spacy.util import compile_infix_regex

    try:
        nlp = spacy.blank(language)
    except (ImportError, KeyError, ValueError) as exc:
        raise StaticvecError(f"spaCy cannot make a blank tokenizer for language {language!r} ({exc})") from None
    infixes = list(nlp.Defaults.infixes or [])
    if not split_hyphens and isinstance(nlp.tokenizer, Tokenizer) and infixes:
        kept = [rule for rule in infixes if not _splits_hyphen(rule)]
        if language == "en" and set(infixes) - set(kept) != {r"(?<=[{a}0-9])(?:{h})(?=[{a}])".format(a=ALPHA, h=HYPHENS)}:
            raise RuntimeError("spaCy's hyphen infix rule changed; update staticvec.corpus.tokenize.make_nlp")
        if len(kept) < len(infixes):
            nlp.tokenizer.infix_finditer = compile_infix_regex(kept).finditer
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10_000_000  # paragraphs are short; guard against pathological lines
    return nlp


def _splits_hyphen(rule: str) -> bool:
    """Whether an infix rule splits the hyphen of a hyphenated word ("ab-cd")."""
    import re

    return any(m.group() == "-" and m.start() == 2 for m in re.finditer(rule, "ab-cd"))


def clean_tokens(tokens: Iterable, settings: TokenizerSettings) -> list[str]:
    """spaCy tokens → strings: no whitespace tokens, no whitespace inside a token, optional lower-casing."""
    words = []
    for tok in tokens:
        if tok.is_space or (not settings.keep_punctuation and tok.is_punct):
            continue
        text = tok.text.lower() if settings.lowercase else tok.text
        # spaCy splits on ' ' only; other Unicode whitespace (NBSP, thin space) may sit inside a token
        words.extend(text.split()) if any(ch.isspace() for ch in text) else words.append(text)
    return words


def tokenize_documents(
    documents: Iterable[Document], settings: TokenizerSettings, nlp=None, batch_size: int = 256, n_process: int = 1,
    removed: dict | None = None,
) -> Iterator[Sentence]:
    """Sentences of every paragraph of every document, in order, with their keep flag.

    Paragraphs that fail the paragraph filter, or hold no training sentence, are dropped whole
    (they are never context for a kept sentence); the paragraph index stays the one in the
    article. ``removed`` (if given) counts the paragraphs, training sentences and tokens the
    paragraph filter removed.
    """
    nlp = nlp or make_nlp(settings.split_hyphens, settings.language)

    def paragraphs():
        for doc in documents:
            for index, text in enumerate(doc.paragraphs):
                yield text, (doc.id, index)

    for spacy_doc, (article, index) in nlp.pipe(paragraphs(), as_tuples=True, batch_size=batch_size, n_process=n_process):
        sentences = [clean_tokens(sent, settings) for sent in spacy_doc.sents]
        sentences = [s for s in sentences if s]
        flags = [settings.keeps(len(s)) for s in sentences]
        if not settings.keeps_paragraph(len(sentences), spacy_doc.text):
            if removed is not None and any(flags):
                removed["paragraphs"] = removed.get("paragraphs", 0) + 1
                removed["sentences"] = removed.get("sentences", 0) + sum(flags)
                removed["tokens"] = removed.get("tokens", 0) + sum(len(s) for s, k in zip(sentences, flags) if k)
            continue
        if any(flags):
            for tokens, keep in zip(sentences, flags):
                yield Sentence(article, index, keep, tokens)
