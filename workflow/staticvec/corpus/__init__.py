"""Corpus stage: Wikipedia dump / WikiExtractor text → tokenized, filtered, sharded sentences."""
