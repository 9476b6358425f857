"""Tiny tokenizers, random teachers and corpus shards for the teacher tests (no download)."""

from __future__ import annotations

import gzip
from pathlib import Path

WORDS = (
    "the cat cats sat on mat a dog dogs ran in park . , ! ? paris is capital of france king queen "
    "ruled country he she read book chair and unbelievable"
).split()

TEXT = [
    "the cat sat on the mat .",
    "a dog ran in the park , the cats sat .",
    "paris is the capital of france !",
    "the king and the queen ruled the country .",
    "he sat on the chair and read a book ?",
    "unbelievable , she said .",
] * 4


def wordpiece_tokenizer(max_length: int = 64):
    """A BERT-style WordPiece tokenizer ([CLS] … [SEP]) over a small vocabulary."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = ["un", "##believ", "##able", "##s", "ca", "##t", "ki", "##ng", "##x"]
    letters = list("abcdefghijklmnopqrstuvwxyz") + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]
    vocab = {}
    for token in specials + [w for w in WORDS if w not in ("unbelievable",)] + pieces + letters:
        vocab.setdefault(token, len(vocab))
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=20))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True, clean_text=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=max_length,
    )


def bytelevel_tokenizer(trim_offsets: bool = False, max_length: int = 64):
    """A GPT-2-style byte-level BPE, trained on a few sentences; no special tokens added."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(TEXT, trainer=trainer)
    tok.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   model_max_length=max_length)


def sentencepiece_tokenizer(max_length: int = 64):
    """A SentencePiece-style ('▁' marks a space) Unigram tokenizer with <s> … </s>."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=120, special_tokens=["<pad>", "<unk>", "<s>", "</s>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(TEXT, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>", model_max_length=max_length)


def tiny_bert(tokenizer=None, seed: int = 0, max_length: int = 64, layers: int = 2):
    """A random BertForMaskedLM teacher (hidden 16, 2 heads)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from staticvec.teacher.load import Teacher

    tokenizer = tokenizer or wordpiece_tokenizer(max_length)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=max_length, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, pad_token_id=tokenizer.pad_token_id)
    return Teacher(BertForMaskedLM(config), tokenizer, name="tiny-bert", device="cpu", attention=True)


def tiny_gpt2(tokenizer=None, seed: int = 0, max_length: int = 64):
    """A random GPT2LMHeadModel teacher over a byte-level BPE."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from staticvec.teacher.load import Teacher

    tokenizer = tokenizer or bytelevel_tokenizer(max_length=max_length)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=2, n_head=2, n_positions=max_length,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return Teacher(GPT2LMHeadModel(config), tokenizer, name="tiny-gpt2", device="cpu", attention=True)


def write_shard(path: Path, paragraphs: list[list[tuple[bool, str]]], article: str = "A") -> Path:
    """A corpus shard: paragraphs of (keep, sentence text)."""
    from staticvec.corpus.shards import Sentence

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for p, sentences in enumerate(paragraphs):
            for keep, text in sentences:
                fh.write(Sentence(article, p, keep, text.split()).to_line())
    return path


def small_shard(path: Path) -> Path:
    paragraphs = []
    for i in range(0, len(TEXT), 3):
        paragraphs.append([(j % 2 == 0 or i % 2 == 0, TEXT[i + j]) for j in range(3)])
    return write_shard(path, paragraphs)


def small_vocab():
    from collections import Counter

    from staticvec.corpus.vocab import Vocabulary

    counts = Counter(w for s in TEXT for w in s.split())
    del counts["unbelievable"]  # one OOV word
    return Vocabulary.from_counts(counts)


def save_local_teacher(directory: Path, texts: list[str], seed: int = 0, layers: int = 2, max_length: int = 512) -> Path:
    """A teacher of one's own as a local model directory: a WordPiece tokenizer trained on ``texts`` (as a
    BERT tokenizer is made) and a random BERT encoder without MLM head (like MiniLM), saved as
    ``save_pretrained`` writes them (config.json, weights, tokenizer.json)."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=600, special_tokens=specials, show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                        sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=max_length, pad_token_id=tokenizer.pad_token_id)
    BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
